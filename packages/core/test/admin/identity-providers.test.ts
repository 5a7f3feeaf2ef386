import { CreateUserInput, IdentityProviderConfig } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import { linkIdentity } from '../../src/admin/identities.js';
import {
  addIdentityProvider,
  getIdentityProvider,
  listIdentityProviders,
  removeIdentityProvider,
  setIdentityProviderDisabled,
  updateIdentityProvider,
} from '../../src/admin/identity-providers.js';
import {
  describeStoredProvider,
  openProviderConfig,
  sealProviderConfig,
} from '../../src/admin/provider-config.js';
import { createUser } from '../../src/admin/users.js';
import { client, SECRET } from '../helpers.js';
import { adminPorts, rejection } from './ports.js';

const GITHUB = { type: 'github', name: 'github', clientId: 'Iv1.x', clientSecret: 'github-plain-secret' };
const LDAP = {
  type: 'ldap',
  name: 'corp-ldap',
  url: 'ldaps://ldap.example.com',
  bindDn: 'cn=reader,dc=example,dc=com',
  bindPassword: 'ldap-plain-password',
  userSearch: { baseDn: 'ou=people,dc=example,dc=com' },
};
const DECLARED = IdentityProviderConfig.parse({
  type: 'gitlab',
  name: 'gl-file',
  clientId: 'x',
  clientSecret: 'file-plain-secret',
});

describe('adding an identity provider', () => {
  it('stores its secrets sealed, and answers it as listed with every secret shown as set', async () => {
    const ports = adminPorts();
    const added = await addIdentityProvider(ports, LDAP);
    expect(added).toMatchObject({ name: 'corp-ldap', type: 'ldap', source: 'database' });
    expect(added.config).toMatchObject({ bindPassword: '[set]', timeoutMs: 5000 });
    expect(added.createdAt).toBe('2026-11-21T10:00:00.000Z');
    const record = await ports.storage.identityProviders.findByName('corp-ldap');
    expect(JSON.stringify(record)).not.toContain('ldap-plain-password');
    if (record === undefined) throw new Error('not stored');
    expect(await openProviderConfig(record, SECRET)).toMatchObject({ bindPassword: 'ldap-plain-password' });
    await expect(openProviderConfig(record, `${SECRET}-other`)).rejects.toThrow(/cannot be decrypted/);
  });

  it('refuses a name taken in any case before checking the rest, and one the configuration file declares', async () => {
    const ports = adminPorts({ declaredProviders: [DECLARED] });
    await addIdentityProvider(ports, GITHUB);
    expect(await rejection(addIdentityProvider(ports, { name: 'GitHub', bogus: true }))).toMatchObject({
      code: 'conflict',
      object: 'identity_provider',
      message: 'identity provider github already exists',
    });
    expect(await rejection(addIdentityProvider(ports, { ...GITHUB, name: 'GL-File' }))).toMatchObject({
      code: 'conflict',
      message: 'identity provider gl-file is declared in the configuration file: change it there',
    });
  });

  it('names the first bad field, never quoting a secret', async () => {
    const ports = adminPorts();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...GITHUB, name: 'gh', baseUrl: 'nope' }, 'baseUrl "nope": Invalid URL'],
      [
        { ...GITHUB, name: 'gh', clientSecret: 'x'.repeat(5000) },
        'clientSecret: Too big: expected string to have <=4096 characters',
      ],
      [{ ...GITHUB, name: 'gh', type: 'saml' }, 'type "saml": must be one of oidc, github, gitlab, ldap'],
      [{ ...LDAP, userSearch: {} }, 'userSearch.baseDn is required'],
      [{ ...GITHUB, name: 'gh', extra: 1 }, 'input: unknown field extra'],
    ];
    for (const [input, message] of cases)
      expect(await rejection(addIdentityProvider(ports, input))).toMatchObject({
        code: 'invalid_input',
        message,
      });
    expect(await listIdentityProviders(ports)).toEqual([]);
  });
});

describe('listing and reading identity providers', () => {
  it('lists those of the configuration file first, then the stored ones it does not shadow', async () => {
    const ports = adminPorts({ declaredProviders: [DECLARED] });
    await addIdentityProvider(ports, GITHUB);
    await addIdentityProvider(ports, LDAP);
    // Stored before the file declared the same name: the file's one wins.
    const now = new Date(ports.clock.now());
    await ports.storage.identityProviders.create({
      name: 'gl-file',
      type: 'gitlab',
      config: await sealProviderConfig(
        IdentityProviderConfig.parse({ ...DECLARED, clientId: 'stored' }),
        SECRET,
      ),
      disabled: false,
      createdAt: now,
      updatedAt: now,
    });
    const all = await listIdentityProviders(ports);
    expect(all.map((p) => [p.name, p.source])).toEqual([
      ['gl-file', 'config'],
      ['corp-ldap', 'database'],
      ['github', 'database'],
    ]);
    expect(JSON.stringify(all)).not.toMatch(/plain-(secret|password)/);
    expect((await listIdentityProviders(ports, { source: 'database' })).map((p) => p.name)).toEqual([
      'corp-ldap',
      'github',
      'gl-file',
    ]);
    expect((await getIdentityProvider(ports, 'GL-FILE')).config.clientId).toBe('x');
    expect((await getIdentityProvider(ports, 'GitHub')).source).toBe('database');
  });

  it('lists a stored provider even when its secret can no longer be opened', async () => {
    const ports = adminPorts();
    await addIdentityProvider(
      { ...ports, keyPolicy: { ...ports.keyPolicy, secret: `${SECRET}-old` } },
      GITHUB,
    );
    const [record] = await ports.storage.identityProviders.list();
    if (record === undefined) throw new Error('not stored');
    expect(describeStoredProvider(record).config.clientSecret).toBe('[set]');
    expect((await listIdentityProviders(ports)).map((p) => p.name)).toEqual(['github']);
  });

  it('answers not found for an unknown name, or one no provider can have', async () => {
    const ports = adminPorts();
    for (const name of ['nope', '9lives', 'x'.repeat(300)])
      expect(await rejection(getIdentityProvider(ports, name))).toMatchObject({
        code: 'not_found',
        key: name,
        message: `no identity provider ${name} in the database`,
      });
  });
});

describe('disabling, enabling and removing identity providers', () => {
  it('disables and enables a stored provider once, with the clock time', async () => {
    const ports = adminPorts();
    await addIdentityProvider(ports, GITHUB);
    ports.clock.advance(60);
    const disabled = await setIdentityProviderDisabled(ports, 'GitHub', true);
    expect([disabled.changed, disabled.provider.config.disabled]).toEqual([true, true]);
    expect((await ports.storage.identityProviders.findByName('github'))?.updatedAt.toISOString()).toBe(
      '2026-11-21T10:01:00.000Z',
    );
    expect((await setIdentityProviderDisabled(ports, 'github', true)).changed).toBe(false);
    expect((await setIdentityProviderDisabled(ports, 'github', false)).provider.config.disabled).toBe(false);
  });

  it('removes a provider with its linked identities and says how many', async () => {
    const ports = adminPorts();
    await addIdentityProvider(ports, GITHUB);
    for (const username of ['alice', 'bob']) {
      await createUser(ports, CreateUserInput.parse({ username }));
      await linkIdentity(ports, { username, provider: 'github', subject: username });
    }
    expect(await removeIdentityProvider(ports, 'GitHub')).toEqual({ name: 'github', unlinked: 2 });
    expect(await ports.storage.identities.find('github', 'alice')).toBeUndefined();
    expect(await rejection(removeIdentityProvider(ports, 'github'))).toMatchObject({ code: 'not_found' });
  });

  it('keeps the providers of the configuration file read-only', async () => {
    const ports = adminPorts({ declaredProviders: [DECLARED] });
    for (const change of [
      () => setIdentityProviderDisabled(ports, 'GL-File', true),
      () => removeIdentityProvider(ports, 'gl-file'),
    ])
      expect(await rejection(change())).toMatchObject({
        code: 'read_only',
        message: 'identity provider gl-file is declared in the configuration file: change it there',
      });
    expect(await rejection(setIdentityProviderDisabled(ports, 'nope', false))).toMatchObject({
      code: 'not_found',
    });
  });
});

describe('changing an identity provider', () => {
  const OIDC = {
    type: 'oidc',
    name: 'corp',
    issuer: 'https://sso.example.com',
    clientId: 'idgate',
    clientSecret: 'first-plain-secret',
    claims: { groups: 'roles' },
  };
  const stored = async (ports: ReturnType<typeof adminPorts>, name: string) => {
    const record = await ports.storage.identityProviders.findByName(name);
    if (record === undefined) throw new Error(`no provider ${name}`);
    return record;
  };

  it('merges the patch, rotates a secret given and keeps the others sealed as they were', async () => {
    const ports = adminPorts();
    const added = await addIdentityProvider(ports, { ...OIDC, displayName: 'Corp' });
    expect(added.config.scopes).toEqual(['openid', 'profile', 'email', 'groups']);
    ports.clock.advance(60);
    const updated = await updateIdentityProvider(
      ports,
      'Corp',
      { clientSecret: 'rotated-plain-secret', claims: { username: 'email' }, displayName: null },
      { ifMatch: added.etag },
    );
    expect(updated.etag).not.toBe(added.etag);
    expect(updated.updatedAt).toBe('2026-11-21T10:01:00.000Z');
    expect(updated.config).toMatchObject({
      clientSecret: '[set]',
      claims: { username: 'email', groups: 'roles' },
    });
    expect(updated.config.displayName).toBeUndefined();
    const opened = await openProviderConfig(await stored(ports, 'corp'), SECRET);
    expect(opened).toMatchObject({ clientSecret: 'rotated-plain-secret', issuer: 'https://sso.example.com' });
    expect(JSON.stringify(await stored(ports, 'corp'))).not.toContain('rotated-plain-secret');

    await addIdentityProvider(ports, LDAP);
    const before = (await stored(ports, 'corp-ldap')).config.bindPassword;
    await updateIdentityProvider(ports, 'corp-ldap', { userSearch: { filter: '(mail={username})' } });
    const after = await stored(ports, 'corp-ldap');
    expect(after.config.bindPassword).toBe(before);
    expect(await openProviderConfig(after, SECRET)).toMatchObject({
      bindPassword: 'ldap-plain-password',
      userSearch: { baseDn: 'ou=people,dc=example,dc=com', filter: '(mail={username})' },
    });
  });

  it('moves the change stamp even within one millisecond, so that cached connectors are rebuilt', async () => {
    const ports = adminPorts();
    await addIdentityProvider(ports, GITHUB);
    const first = await updateIdentityProvider(ports, 'github', { displayName: 'GitHub' });
    const second = await updateIdentityProvider(ports, 'github', { clientSecret: 'again' });
    expect(first.updatedAt).toBe('2026-11-21T10:00:00.001Z');
    expect(second.updatedAt).toBe('2026-11-21T10:00:00.002Z');
    expect(second.etag).not.toBe(first.etag);
  });

  it('keeps the identities linked through the provider', async () => {
    const ports = adminPorts();
    await addIdentityProvider(ports, GITHUB);
    await createUser(ports, CreateUserInput.parse({ username: 'alice' }));
    await linkIdentity(ports, { username: 'alice', provider: 'github', subject: '7' });
    await updateIdentityProvider(ports, 'github', {
      clientSecret: 'rotated',
      name: 'GitHub',
      type: 'github',
    });
    expect(await ports.storage.identities.find('github', '7')).toMatchObject({ subject: '7' });
  });

  it('refuses a stale If-Match, a new name or type, and a bad merged field, changing nothing', async () => {
    const ports = adminPorts();
    const added = await addIdentityProvider(ports, OIDC);
    await updateIdentityProvider(ports, 'corp', { displayName: 'Corp' });
    expect(await rejection(updateIdentityProvider(ports, 'corp', {}, { ifMatch: added.etag }))).toMatchObject(
      {
        code: 'precondition_failed',
      },
    );
    const refusals: Array<[unknown, string]> = [
      [{ name: 'corp2' }, 'name cannot be changed'],
      [{ type: 'github' }, 'type cannot be changed'],
      [{ issuer: 'not a url' }, 'issuer'],
      [{ clientSecret: null }, 'clientSecret is required'],
      [{ bogus: 1 }, 'unknown field bogus'],
      [JSON.parse('{"__proto__": {"x": 1}}'), 'unknown field __proto__'],
      [['displayName'], 'must be a JSON object'],
    ];
    for (const [patch, message] of refusals) {
      const error = await rejection(updateIdentityProvider(ports, 'corp', patch));
      expect(error).toMatchObject({ code: 'invalid_input' });
      expect(error.message).toContain(message);
    }
    expect(
      JSON.stringify(await rejection(updateIdentityProvider(ports, 'corp', { clientSecret: '' }))),
    ).not.toContain('first-plain-secret');
    expect((await getIdentityProvider(ports, 'corp')).config.displayName).toBe('Corp');
  });

  it('checks the token client as adding does: it must exist and take user sign-ins', async () => {
    const ports = adminPorts();
    await ports.storage.clients.create(client({ clientId: 'kubectl', grantTypes: ['authorization_code'] }));
    await ports.storage.clients.create(client({ clientId: 'robot', grantTypes: ['client_credentials'] }));
    const missing = await rejection(addIdentityProvider(ports, { ...GITHUB, tokenClientId: 'nope' }));
    expect(missing).toMatchObject({ code: 'invalid_input' });
    expect(missing.message).toContain('tokenClientId "nope": there is no such client');
    await addIdentityProvider(ports, { ...GITHUB, tokenClientId: 'kubectl' });
    const machine = await rejection(updateIdentityProvider(ports, 'github', { tokenClientId: 'robot' }));
    expect(machine.message).toContain('tokenClientId "robot": the client has none of the grant types');
    const removed = await updateIdentityProvider(ports, 'github', { tokenClientId: null });
    expect(removed.config.tokenClientId).toBeUndefined();
  });

  it('refuses providers of the configuration file and unknown names', async () => {
    const ports = adminPorts({ declaredProviders: [DECLARED] });
    expect(await rejection(updateIdentityProvider(ports, 'GL-File', { displayName: 'x' }))).toMatchObject({
      code: 'read_only',
    });
    expect(await rejection(updateIdentityProvider(ports, 'nope', {}))).toMatchObject({ code: 'not_found' });
  });
});
