import { describe, expect, it } from 'vitest';
import {
  type IdentityProviderRecord,
  type LinkedIdentityRecord,
  type LoginTransactionRecord,
  StorageConflictError,
} from '../src/index.js';
import { createMemoryStorage } from '../src/testing.js';

const at = (iso: string) => new Date(iso);
const T0 = at('2026-01-01T10:00:00.000Z');

const provider = (overrides: Partial<IdentityProviderRecord> = {}): IdentityProviderRecord => ({
  name: 'github',
  type: 'github',
  config: { name: 'github', type: 'github', clientId: 'Iv1.x', clientSecret: 'v1.sealed' },
  disabled: false,
  createdAt: T0,
  updatedAt: T0,
  ...overrides,
});

const identity = (overrides: Partial<LinkedIdentityRecord> = {}): LinkedIdentityRecord => ({
  provider: 'github',
  subject: '583231',
  userId: 'u-alice',
  username: 'octocat',
  email: null,
  groups: ['github:acme'],
  linkedAt: T0,
  lastLoginAt: null,
  ...overrides,
});

const transaction = (overrides: Partial<LoginTransactionRecord> = {}): LoginTransactionRecord => ({
  stateHash: 'state-hash',
  provider: 'github',
  bindingHash: 'binding-hash',
  nonce: 'nonce',
  codeVerifier: 'verifier',
  interactionId: null,
  createdAt: T0,
  expiresAt: at('2026-01-01T10:10:00.000Z'),
  consumedAt: null,
  ...overrides,
});

describe('in-memory identity providers', () => {
  it('stores names lower-cased, finds and refuses them regardless of case, lists by name', async () => {
    const storage = createMemoryStorage();
    expect((await storage.identityProviders.create(provider({ name: 'GitHub' }))).name).toBe('github');
    await expect(storage.identityProviders.create(provider({ name: 'GITHUB' }))).rejects.toMatchObject({
      field: 'name',
    });
    await storage.identityProviders.create(provider({ name: 'corp', type: 'oidc' }));
    expect(await storage.identityProviders.findByName('GitHub')).toStrictEqual(provider());
    expect((await storage.identityProviders.list()).map((p) => p.name)).toEqual(['corp', 'github']);
  });

  it('copies records in and out', async () => {
    const storage = createMemoryStorage();
    const record = provider();
    await storage.identityProviders.create(record);
    (record.config as { clientId: string }).clientId = 'changed';
    const found = await storage.identityProviders.findByName('github');
    expect(found?.config.clientId).toBe('Iv1.x');
    if (found !== undefined) found.disabled = true;
    expect((await storage.identityProviders.findByName('github'))?.disabled).toBe(false);
  });

  it('disables with updatedAt, and removes with the linked identities', async () => {
    const storage = createMemoryStorage();
    await storage.identityProviders.create(provider());
    const later = at('2026-02-01T00:00:00.000Z');
    expect(await storage.identityProviders.setDisabled('GITHUB', true, later)).toStrictEqual(
      provider({ disabled: true, updatedAt: later }),
    );
    expect(await storage.identityProviders.setDisabled('gitlab', true, later)).toBeUndefined();
    await storage.identities.link(identity());
    await storage.identities.link(identity({ provider: 'corp' }));
    await storage.identities.link(identity({ subject: '42', userId: 'u-bob' }));
    expect(await storage.identities.countByProvider('github')).toBe(2);
    expect(await storage.identityProviders.remove('GitHub')).toBe(true);
    expect(await storage.identities.countByProvider('github')).toBe(0);
    expect(await storage.identityProviders.remove('github')).toBe(false);
    expect(await storage.identities.listByUser('u-alice')).toStrictEqual([identity({ provider: 'corp' })]);
    // corp is not stored (a provider of the configuration file): its identities stay.
    expect(await storage.identityProviders.remove('corp')).toBe(false);
    expect(await storage.identities.find('corp', '583231')).toBeDefined();
  });
});

describe('in-memory linked identities', () => {
  it('links once per (provider, subject), lists by provider then subject, records sign-ins, unlinks', async () => {
    const storage = createMemoryStorage();
    await storage.identities.link(identity({ subject: 'b' }));
    await storage.identities.link(identity({ subject: 'a' }));
    await storage.identities.link(identity({ provider: 'corp', subject: 'z' }));
    const again = storage.identities.link(identity({ subject: 'a', userId: 'u-bob' }));
    await expect(again).rejects.toBeInstanceOf(StorageConflictError);
    await expect(again).rejects.toMatchObject({ field: 'subject' });
    expect((await storage.identities.listByUser('u-alice')).map((i) => `${i.provider}/${i.subject}`)).toEqual(
      ['corp/z', 'github/a', 'github/b'],
    );
    const signedIn = at('2026-03-01T00:00:00.000Z');
    await storage.identities.recordSignIn('github', 'a', {
      username: 'octo',
      email: 'o@example.com',
      groups: [],
      at: signedIn,
    });
    expect(await storage.identities.find('github', 'a')).toStrictEqual(
      identity({ subject: 'a', username: 'octo', email: 'o@example.com', groups: [], lastLoginAt: signedIn }),
    );
    expect(await storage.identities.unlink('github', 'a')).toBe(true);
    expect(await storage.identities.unlink('github', 'a')).toBe(false);
  });
});

describe('in-memory login transactions', () => {
  it('consumes once, then replays; unknown for a state it never stored', async () => {
    const storage = createMemoryStorage();
    await storage.loginTransactions.create(transaction());
    await expect(storage.loginTransactions.create(transaction())).rejects.toMatchObject({
      field: 'stateHash',
    });
    const used = at('2026-01-01T10:01:00.000Z');
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        storage.loginTransactions.consume('state-hash', new Date(used.getTime() + i)),
      ),
    );
    expect(results.filter((r) => r.status === 'consumed')).toStrictEqual([
      { status: 'consumed', transaction: transaction({ consumedAt: used }) },
    ]);
    expect(results.filter((r) => r.status === 'replayed')).toHaveLength(7);
    expect(await storage.loginTransactions.consume('nope', used)).toStrictEqual({ status: 'unknown' });
  });

  it('purges those that expired before now', async () => {
    const storage = createMemoryStorage();
    await storage.loginTransactions.create(
      transaction({ stateHash: 'old', expiresAt: at('2026-01-01T10:09:59Z') }),
    );
    await storage.loginTransactions.create(transaction({ stateHash: 'edge' }));
    expect(await storage.loginTransactions.purgeExpired(at('2026-01-01T10:10:00.000Z'))).toBe(1);
    expect((await storage.loginTransactions.consume('edge', T0)).status).toBe('consumed');
  });

  it('rolls federation writes back with a failed transaction', async () => {
    const storage = createMemoryStorage();
    await storage.identityProviders.create(provider());
    await storage.identities.link(identity());
    await storage.loginTransactions.create(transaction());
    await expect(
      storage.transaction(async (tx) => {
        await tx.identityProviders.remove('github');
        await tx.loginTransactions.consume('state-hash', T0);
        await tx.identityProviders.create(provider({ name: 'gitlab', type: 'gitlab' }));
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect((await storage.identityProviders.list()).map((p) => p.name)).toEqual(['github']);
    expect(await storage.identities.find('github', '583231')).toStrictEqual(identity());
    expect((await storage.loginTransactions.consume('state-hash', T0)).status).toBe('consumed');
  });
});
