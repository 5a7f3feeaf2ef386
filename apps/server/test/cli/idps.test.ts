import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openText } from '@idgate/core';
import { IdentityProvider, IdentityProviderConfig } from '@idgate/schema';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BIND_PASSWORD, CLIENT_SECRET, GITHUB, stored } from './idps-support.js';
import { assertBuilt, envFor, errorLines, runInProcess, SECRET, tempSqlite } from './support.js';

beforeAll(assertBuilt);

let db: Awaited<ReturnType<typeof tempSqlite>>;
let env: Record<string, string>;
beforeEach(async () => {
  db = await tempSqlite();
  env = envFor(db.url, { IDGATE_ISSUER: 'https://id.example.com/oauth' });
  expect((await runInProcess(['migrate'], { env })).code).toBe(0);
});
afterEach(async () => {
  await db.remove();
});

describe('idgate idps add', () => {
  it('reads the client secret from stdin, stores it sealed and never prints it', async () => {
    const args = [...GITHUB, '--client-secret-stdin', '--allowed-org', 'acme', '--allowed-org', 'globex'];
    const result = await runInProcess([...args, '--no-teams', '--trust-email-verified', '--json'], {
      env,
      input: `${CLIENT_SECRET}\n`,
    });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).not.toContain(CLIENT_SECRET);
    const printed = IdentityProvider.parse(JSON.parse(result.stdout));
    expect(printed).toMatchObject({ name: 'github', type: 'github', source: 'database' });
    expect(printed.config).toStrictEqual({
      name: 'github',
      type: 'github',
      mapping: 'auto',
      linkByVerifiedEmail: false,
      disabled: false,
      clientId: 'Iv1.abc',
      clientSecret: '[set]',
      baseUrl: 'https://github.com',
      apiUrl: 'https://api.github.com',
      allowedOrganizations: ['acme', 'globex'],
      loadTeams: false,
      trustEmailVerified: true,
    });

    const { rows, configs } = await stored(db.url);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.config).not.toContain(CLIENT_SECRET);
    const sealed = (JSON.parse(rows[0]?.config ?? '{}') as { clientSecret: string }).clientSecret;
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+$/);
    expect(await openText(sealed, SECRET, 'idp:github:clientSecret')).toBe(CLIENT_SECRET);
    await expect(openText(sealed, SECRET, 'idp:other:clientSecret')).rejects.toThrow('cannot be decrypted');
    expect(configs[0]).toMatchObject({ clientSecret: CLIENT_SECRET, loadTeams: false });
  });

  it('prints the provider and its callback URL, secrets as [set]', async () => {
    const args = ['idps', 'add', '--name', 'corp', '--type', 'oidc', '--issuer', 'https://sso.example.com'];
    const options = [
      '--client-id',
      'idgate',
      '--client-secret-stdin',
      '--mapping',
      'lookup',
      '--use-userinfo',
    ];
    const claims = ['--username-claim', 'upn', '--groups-claim', 'roles', '--display-name', 'Corporate SSO'];
    const result = await runInProcess([...args, ...options, ...claims, '--scope', 'openid', 'groups'], {
      env,
      input: CLIENT_SECRET,
    });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).not.toContain(CLIENT_SECRET);
    expect(result.stdout).toMatch(/^added identity provider corp \(oidc\)\n/);
    expect(result.stdout).toMatch(/^ {2}clientSecret: +\[set\]$/m);
    expect(result.stdout).toMatch(/^ {2}claims\.username: +upn$/m);
    expect(result.stdout).toMatch(/^ {2}scopes: +openid, groups$/m);
    expect(result.stdout).toMatch(/\ncallback URL: https:\/\/id\.example\.com\/oauth\/callback\/corp\n$/);
    const { configs } = await stored(db.url);
    expect(configs[0]).toMatchObject({
      mapping: 'lookup',
      useUserinfo: true,
      displayName: 'Corporate SSO',
      scopes: ['openid', 'groups'],
      claims: { username: 'upn', email: 'email', groups: 'roles', name: 'name' },
      clientSecret: CLIENT_SECRET,
    });
  });

  it('--trust-upstream-mfa: adds, replaces and unsets the trusted upstream amr/acr values', async () => {
    const add = ['idps', 'add', '--name', 'corp', '--type', 'oidc', '--issuer', 'https://sso.example.com'];
    const trust = ['--trust-upstream-mfa', 'mfa', '--trust-upstream-mfa', 'urn:corp:acr:strong'];
    const added = await runInProcess([...add, '--client-id', 'idgate', '--client-secret-stdin', ...trust], {
      env,
      input: CLIENT_SECRET,
    });
    expect(added).toMatchObject({ code: 0, stderr: '' });
    expect((await stored(db.url)).configs[0]).toMatchObject({
      trustUpstreamMfa: ['mfa', 'urn:corp:acr:strong'],
    });
    const replaced = await runInProcess(['idps', 'update', 'corp', '--trust-upstream-mfa', 'hwk'], { env });
    expect(replaced).toMatchObject({ code: 0, stderr: '' });
    expect((await stored(db.url)).configs[0]).toMatchObject({ trustUpstreamMfa: ['hwk'] });
    const bad = await runInProcess(['idps', 'update', 'corp', '--trust-upstream-mfa', 'two words'], { env });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--trust-upstream-mfa');
    const cleared = await runInProcess(['idps', 'update', 'corp', '--unset', 'trust-upstream-mfa'], { env });
    expect(cleared).toMatchObject({ code: 0, stderr: '' });
    expect((await stored(db.url)).configs[0]).toMatchObject({ trustUpstreamMfa: [] });
    const github = await runInProcess([...GITHUB, '--client-secret-stdin', '--trust-upstream-mfa', 'mfa'], {
      env,
      input: CLIENT_SECRET,
    });
    expect(github.code).not.toBe(0);
    expect(github.stderr).toContain('--trust-upstream-mfa');
  });

  it('adds an LDAP directory with a bind password from stdin and a CA file', async () => {
    const caFile = join(db.dir, 'ca.pem');
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    await writeFile(caFile, pem);
    const args = [
      'idps',
      'add',
      '--name',
      'corp-ldap',
      '--type',
      'ldap',
      '--url',
      'ldap://ldap.example.com:389',
    ];
    const bind = [
      '--start-tls',
      '--ca-file',
      caFile,
      '--bind-dn',
      'cn=admin,dc=example',
      '--bind-password-stdin',
    ];
    const search = ['--user-base-dn', 'ou=people,dc=example', '--group-base-dn', 'ou=groups,dc=example'];
    const result = await runInProcess([...args, ...bind, ...search, '--timeout-ms', '2000', '--json'], {
      env,
      input: `${BIND_PASSWORD}\n`,
    });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).not.toContain(BIND_PASSWORD);
    expect(JSON.parse(result.stdout).config).toMatchObject({ bindPassword: '[set]', caCertificate: pem });
    const { rows, configs } = await stored(db.url);
    expect(rows[0]?.config).not.toContain(BIND_PASSWORD);
    expect(configs[0]).toMatchObject({
      startTls: true,
      caCertificate: pem,
      bindPassword: BIND_PASSWORD,
      timeoutMs: 2000,
      userSearch: { baseDn: 'ou=people,dc=example', filter: '(uid={username})' },
      groupSearch: { baseDn: 'ou=groups,dc=example', filter: '(member={dn})' },
    });
  });

  it('adds a GitLab provider with its groups', async () => {
    const args = ['idps', 'add', '--name', 'gitlab', '--type', 'gitlab', '--client-id', 'x'];
    const more = ['--client-secret-stdin', '--base-url', 'https://gitlab.example.com'];
    const result = await runInProcess([...args, ...more, '--allowed-group', 'a/b', '--allowed-group', 'c'], {
      env,
      input: CLIENT_SECRET,
    });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect((await stored(db.url)).configs[0]).toMatchObject({
      baseUrl: 'https://gitlab.example.com',
      allowedGroups: ['a/b', 'c'],
    });
  });

  it.each(['json', 'yaml'])('reads one provider from a %s file, secrets inline', async (format) => {
    const provider = {
      type: 'gitlab',
      name: 'gitlab',
      clientId: 'x',
      clientSecret: CLIENT_SECRET,
      mapping: 'manual',
    };
    const file = join(db.dir, `gitlab.${format}`);
    const yaml = Object.entries(provider).map(([key, value]) => `${key}: ${value}\n`);
    await writeFile(file, format === 'json' ? JSON.stringify(provider) : yaml.join(''));
    const result = await runInProcess(['idps', 'add', '--from-file', file, '--json'], { env });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).not.toContain(CLIENT_SECRET);
    expect(JSON.parse(result.stdout).config).toMatchObject({ clientSecret: '[set]', mapping: 'manual' });
    const { rows, configs } = await stored(db.url);
    expect(rows[0]?.config).not.toContain(CLIENT_SECRET);
    expect(configs[0]).toStrictEqual(IdentityProviderConfig.parse(provider));
  });

  it('refuses a name that exists, and one the configuration file declares', async () => {
    expect((await runInProcess([...GITHUB, '--client-secret-stdin'], { env, input: 's1' })).code).toBe(0);
    const again = await runInProcess([...GITHUB, '--client-secret-stdin', '--json'], { env, input: 's2' });
    expect(again).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'idgate: identity provider github already exists\n',
    });

    const config = join(db.dir, 'idgate.yaml');
    const declared = '  - { type: gitlab, name: corp, clientId: x, clientSecret: s }\n';
    await writeFile(config, `identityProviders:\n${declared}`);
    const args = [
      '--config',
      config,
      'idps',
      'add',
      '--name',
      'corp',
      '--type',
      'gitlab',
      '--client-id',
      'y',
    ];
    const clash = await runInProcess([...args, '--client-secret-stdin'], { env, input: 's3' });
    expect(clash.code).toBe(1);
    expect(errorLines(clash.stderr)).toEqual([
      'idgate: identity provider corp is declared in the configuration file: change it there',
    ]);
    expect((await stored(db.url)).rows.map((row) => row.name)).toEqual(['github']);
  });
});
