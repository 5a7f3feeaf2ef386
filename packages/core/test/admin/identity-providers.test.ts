import { CreateUserInput, IdentityProviderConfig } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import {
  addIdentityProvider,
  createUser,
  describeStoredProvider,
  getIdentityProvider,
  linkIdentity,
  listIdentityProviders,
  openProviderConfig,
  removeIdentityProvider,
  sealProviderConfig,
  setIdentityProviderDisabled,
} from '../../src/index.js';
import { SECRET } from '../helpers.js';
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
