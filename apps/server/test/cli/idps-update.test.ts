import { registerClient } from '@idgate/core/admin';
import { IdentityProvider } from '@idgate/schema';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { adminPorts } from '../../src/admin-ports.js';
import { type TestDatabase, testDatabaseUrls } from '../helpers/databases.js';
import { BIND_PASSWORD, CLIENT_SECRET, GITHUB, stored } from './idps-support.js';
import { assertBuilt, envFor, openTestServices, runInProcess, tempSqlite } from './support.js';

beforeAll(assertBuilt);

const ROTATED = 'gh-rotated-secret-7c222fb2927d828af22f592134e8932480637c0d';

/** Registers a client straight through the use case (the CLI's own output is not under test here). */
async function addClient(
  url: string,
  name: string,
  grantTypes: Array<'authorization_code' | 'client_credentials'>,
) {
  const services = await openTestServices(url);
  try {
    const { client } = await registerClient(adminPorts(services), {
      name,
      public: false,
      trusted: true,
      redirectUris: [],
      postLogoutRedirectUris: [],
      grantTypes,
      scopes: ['openid', 'groups'],
      audiences: [],
      accessTokenTtl: 600,
      refreshTokenTtl: 86_400,
    });
    return client.clientId;
  } finally {
    await services.close();
  }
}

describe.each(testDatabaseUrls())('idgate idps update on $name', ({ create }) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  beforeEach(async () => {
    database = await create();
    env = envFor(database.url, { IDGATE_ISSUER: 'https://id.example.com/oauth' });
    expect((await runInProcess(['migrate'], { env })).code).toBe(0);
  });
  afterEach(async () => {
    await database.drop();
  });

  it('changes only what is given, rotates the secret from stdin and keeps linked identities', async () => {
    const added = await runInProcess(
      [...GITHUB, '--client-secret-stdin', '--allowed-org', 'acme', '--json'],
      {
        env,
        input: CLIENT_SECRET,
      },
    );
    expect(added.code).toBe(0);
    const before = IdentityProvider.parse(JSON.parse(added.stdout));
    expect((await runInProcess(['users', 'add', 'alice'], { env })).code).toBe(0);
    const link = ['users', 'link', 'alice', '--idp', 'github', '--subject', '583231'];
    expect((await runInProcess(link, { env })).code).toBe(0);

    const update = [
      'idps',
      'update',
      'GitHub',
      '--client-secret-stdin',
      '--display-name',
      'GitHub',
      '--no-teams',
    ];
    const result = await runInProcess([...update, '--if-match', before.etag, '--json'], {
      env,
      input: `${ROTATED}\n`,
    });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).not.toContain(ROTATED);
    const after = IdentityProvider.parse(JSON.parse(result.stdout));
    expect(after.etag).not.toBe(before.etag);
    expect(after.config).toMatchObject({
      displayName: 'GitHub',
      loadTeams: false,
      allowedOrganizations: ['acme'],
      clientId: 'Iv1.abc',
      clientSecret: '[set]',
    });
    const { rows, configs } = await stored(database.url);
    expect(rows[0]?.config).not.toContain(ROTATED);
    expect(configs[0]).toMatchObject({ clientSecret: ROTATED, loadTeams: false });
    const identities = await runInProcess(['users', 'identities', 'alice', '--json'], { env });
    expect(JSON.parse(identities.stdout)).toMatchObject([{ provider: 'github', subject: '583231' }]);

    const stale = await runInProcess(['idps', 'update', 'github', '--teams', '--if-match', before.etag], {
      env,
    });
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/^idgate: identity provider github has changed since it was read/);

    const text = await runInProcess(['idps', 'update', 'github', '--teams'], { env });
    expect(text).toMatchObject({ code: 0, stderr: '' });
    expect(text.stdout).toMatch(/^updated identity provider github \(github\)\n/);
    expect(text.stdout).toMatch(/^ {2}loadTeams: +true$/m);
    // Trusting the provider's verified email, and no longer.
    const trusting = await runInProcess(['idps', 'update', 'github', '--trust-email-verified', '--json'], {
      env,
    });
    expect(JSON.parse(trusting.stdout).config).toMatchObject({ trustEmailVerified: true });
    const distrusting = await runInProcess(
      ['idps', 'update', 'github', '--no-trust-email-verified', '--json'],
      {
        env,
      },
    );
    expect(JSON.parse(distrusting.stdout).config).toMatchObject({ trustEmailVerified: false });
    const shown = await runInProcess(['idps', 'get', 'github'], { env });
    expect(shown.stdout).toMatch(/^ {2}etag: "[0-9a-f]{16}"$/m);
  }, 120_000);

  it('updates an LDAP directory: bind password rotated, search settings merged', async () => {
    const ldap = [
      'idps',
      'add',
      '--name',
      'corp-ldap',
      '--type',
      'ldap',
      '--url',
      'ldaps://ldap.example.com',
    ];
    const bind = ['--bind-dn', 'cn=reader,dc=example,dc=com', '--bind-password-stdin'];
    expect(
      (
        await runInProcess([...ldap, ...bind, '--user-base-dn', 'ou=people,dc=example'], {
          env,
          input: 'old-pw',
        })
      ).code,
    ).toBe(0);
    const update = [
      'idps',
      'update',
      'corp-ldap',
      '--bind-password-stdin',
      '--user-filter',
      '(mail={username})',
    ];
    expect(
      (await runInProcess([...update, '--timeout-ms', '9000'], { env, input: BIND_PASSWORD })).code,
    ).toBe(0);
    const { configs } = await stored(database.url);
    expect(configs[0]).toMatchObject({
      bindPassword: BIND_PASSWORD,
      timeoutMs: 9000,
      userSearch: { baseDn: 'ou=people,dc=example', filter: '(mail={username})', usernameAttribute: 'uid' },
    });
  }, 60_000);

  it('--unset puts optional settings back to their defaults, nested ones included', async () => {
    const add = [...GITHUB, '--client-secret-stdin', '--display-name', 'GitHub Enterprise'];
    const withPrefix = [
      ...add,
      '--groups-prefix',
      'gh:',
      '--allowed-org',
      'acme',
      '--api-url',
      'https://ghe.example.com/api/v3',
    ];
    expect((await runInProcess(withPrefix, { env, input: CLIENT_SECRET })).code).toBe(0);
    const update = ['idps', 'update', 'github', '--unset', 'display-name', '--unset', '--api-url'];
    const result = await runInProcess([...update, '--unset', 'allowed-org', '--json'], { env });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const config = IdentityProvider.parse(JSON.parse(result.stdout)).config;
    expect(config).not.toHaveProperty('displayName');
    expect(config).toMatchObject({
      apiUrl: 'https://api.github.com',
      allowedOrganizations: [],
      groupsPrefix: 'gh:',
      clientId: 'Iv1.abc',
      clientSecret: '[set]',
    });
    expect((await stored(database.url)).configs[0]).toMatchObject({ clientSecret: CLIENT_SECRET });

    const ldap = ['idps', 'add', '--name', 'corp', '--type', 'ldap', '--url', 'ldap://ldap.example.com'];
    const search = ['--user-base-dn', 'ou=people,dc=example', '--user-filter', '(mail={username})'];
    expect((await runInProcess([...ldap, ...search, '--group-base-dn', 'ou=groups'], { env })).code).toBe(0);
    const nested = await runInProcess(['idps', 'update', 'corp', '--unset', 'user-filter', '--json'], {
      env,
    });
    expect(nested.code).toBe(0);
    const userSearch = IdentityProvider.parse(JSON.parse(nested.stdout)).config.userSearch;
    expect(userSearch).toMatchObject({ baseDn: 'ou=people,dc=example', filter: '(uid={username})' });
  }, 60_000);

  it('--unset refuses what it cannot put back, in one line, changing nothing', async () => {
    expect(
      (
        await runInProcess([...GITHUB, '--client-secret-stdin', '--display-name', 'GH'], {
          env,
          input: CLIENT_SECRET,
        })
      ).code,
    ).toBe(0);
    for (const [args, message] of [
      [['--unset', 'teams'], '--unset teams: not an option that sets a value ('],
      [['--unset', 'name'], '--unset name: not an option that sets a value ('],
      [['--unset', 'issuer'], '--unset issuer: --issuer does not apply to a provider of type github'],
      [['--unset', 'display-name', '--display-name', 'x'], '--display-name cannot be both given and unset'],
      [['--unset', 'client-id'], '--client-id'],
    ] as const) {
      const result = await runInProcess(['idps', 'update', 'github', ...args], { env });
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr.startsWith(`idgate: ${message}`)).toBe(true);
      expect(result.stderr.split('\n')).toHaveLength(2);
    }
    expect((await stored(database.url)).configs[0]).toMatchObject({ displayName: 'GH', clientId: 'Iv1.abc' });
  }, 60_000);

  it('refuses with one line: unknown provider, an option of another type, nothing to change, a bad value', async () => {
    expect(
      (await runInProcess([...GITHUB, '--client-secret-stdin'], { env, input: CLIENT_SECRET })).code,
    ).toBe(0);
    for (const [args, message] of [
      [['idps', 'update', 'nope', '--display-name', 'x'], 'no identity provider nope in the database'],
      [
        ['idps', 'update', 'github', '--issuer', 'https://x.example.com'],
        '--issuer does not apply to a provider of type github',
      ],
      [['idps', 'update', 'github'], 'idps update needs at least one option to change'],
      [['idps', 'update', 'github', '--base-url', 'github.com'], '--base-url "github.com": Invalid URL'],
      [
        ['idps', 'update', 'github', '--token-client', 'nope'],
        '--token-client "nope": there is no such client',
      ],
    ] as const) {
      const result = await runInProcess([...args], { env });
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr.startsWith(`idgate: ${message}`)).toBe(true);
      expect(result.stderr.split('\n')).toHaveLength(2);
    }
    expect((await stored(database.url)).configs[0]).toMatchObject({ clientSecret: CLIENT_SECRET });
  }, 60_000);
});

describe('idgate idps add --token-client', () => {
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

  it('refuses a client that does not exist, or that no user signs in to, before storing anything', async () => {
    const missing = await runInProcess([...GITHUB, '--client-secret-stdin', '--token-client', 'nope'], {
      env,
      input: CLIENT_SECRET,
    });
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toBe(
      'idgate: --token-client "nope": there is no such client; name an existing client that users sign in to (e.g. kubectl\'s)\n',
    );
    const robot = await addClient(db.url, 'robot', ['client_credentials']);
    const machine = await runInProcess([...GITHUB, '--client-secret-stdin', '--token-client', robot], {
      env,
      input: CLIENT_SECRET,
    });
    expect(machine.code).toBe(1);
    expect(machine.stderr).toContain('the client has none of the grant types users sign in with');
    expect((await stored(db.url)).rows).toEqual([]);

    const kubectl = await addClient(db.url, 'kubectl', ['authorization_code']);
    const added = await runInProcess(
      [...GITHUB, '--client-secret-stdin', '--token-client', kubectl, '--json'],
      {
        env,
        input: CLIENT_SECRET,
      },
    );
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ config: { tokenClientId: kubectl } });
  });

  it('prints the default of each option in --help', async () => {
    const help = await runInProcess(['idps', 'add', '--help'], { env });
    // Commander wraps descriptions to the terminal's width.
    help.stdout = help.stdout.replace(/\s+/g, ' ');
    expect(help.stdout).toContain('(repeatable; default: openid profile email groups)');
    expect(help.stdout).toContain('(default: auto)');
    const update = await runInProcess(['idps', 'update', '--help'], { env });
    expect(update.stdout).toContain('--client-secret-stdin');
    expect(update.stdout).not.toContain('--type <type>');
  });
});
