import { describe, expect, it } from 'vitest';
import { StorageConflictError } from '../../ports/storage.js';
import { at, newClient } from './records.js';
import type { StorageUnderTest } from './subject.js';

export function clientsContract(subject: StorageUnderTest): void {
  describe('clients', () => {
    it('creates a client and reads it back exactly', async () => {
      const storage = subject();
      const client = newClient();
      expect(await storage.clients.create(client)).toStrictEqual(client);
      expect(await storage.clients.findById('ci')).toStrictEqual(client);
    });

    it('round-trips a public, untrusted client with empty lists', async () => {
      const storage = subject();
      const client = newClient({
        clientId: 'spa',
        secretHash: null,
        public: true,
        trusted: false,
        redirectUris: [],
        postLogoutRedirectUris: [],
        grantTypes: ['authorization_code'],
        scopes: [],
        audiences: [],
      });
      await storage.clients.create(client);
      expect(await storage.clients.findById('spa')).toStrictEqual(client);
    });

    it('rejects a duplicate client id with a clientId conflict', async () => {
      const storage = subject();
      await storage.clients.create(newClient());
      const attempt = storage.clients.create(newClient({ name: 'another' }));
      await expect(attempt).rejects.toBeInstanceOf(StorageConflictError);
      await expect(attempt).rejects.toMatchObject({ field: 'clientId' });
      expect((await storage.clients.findById('ci'))?.name).toBe('CI pipeline');
    });

    it('treats client ids as case-sensitive', async () => {
      const storage = subject();
      await storage.clients.create(newClient());
      await storage.clients.create(newClient({ clientId: 'CI' }));
      expect(await storage.clients.count()).toBe(2);
    });

    it('lists clients by creation time', async () => {
      const storage = subject();
      await storage.clients.create(newClient({ clientId: 'b', createdAt: at('2026-01-03T00:00:00Z') }));
      await storage.clients.create(newClient({ clientId: 'c', createdAt: at('2026-01-01T00:00:00Z') }));
      await storage.clients.create(newClient({ clientId: 'a', createdAt: at('2026-01-02T00:00:00Z') }));
      expect((await storage.clients.list()).map((c) => c.clientId)).toEqual(['c', 'a', 'b']);
    });

    it('removes a client and reports whether there was one', async () => {
      const storage = subject();
      await storage.clients.create(newClient());
      await storage.clients.create(newClient({ clientId: 'other' }));
      expect(await storage.clients.remove('ci')).toBe(true);
      expect(await storage.clients.remove('ci')).toBe(false);
      expect(await storage.clients.remove('missing')).toBe(false);
      expect(await storage.clients.findById('ci')).toBeUndefined();
      expect(await storage.clients.count()).toBe(1);
    });

    it('replaces every field but the id and creation time, the previous secret included', async () => {
      const storage = subject();
      const client = newClient();
      await storage.clients.create(client);
      const changed = {
        ...client,
        name: 'renamed',
        secretHash: 'bmV3LWhhc2g',
        previousSecretHash: client.secretHash,
        previousSecretExpiresAt: at('2026-02-01T00:00:00.000Z'),
        trusted: false,
        scopes: ['openid'],
        accessTokenTtl: 60,
      };
      expect(await storage.clients.update({ ...changed, createdAt: at('2030-01-01T00:00:00.000Z') })).toBe(
        true,
      );
      expect(await storage.clients.findById('ci')).toStrictEqual(changed);
      expect(await storage.clients.update(newClient({ clientId: 'missing' }))).toBe(false);
    });

    it('pages by creation time, then id, after a position', async () => {
      const storage = subject();
      const t = at('2026-01-01T00:00:00.000Z');
      for (const [id, ms] of [
        ['b', 0],
        ['a', 0],
        ['c', 1],
        ['d', 2],
      ] as const)
        await storage.clients.create(newClient({ clientId: id, createdAt: new Date(t.getTime() + ms) }));
      const ids = (clients: { clientId: string }[]) => clients.map((c) => c.clientId);
      expect(ids(await storage.clients.listPage(3))).toEqual(['a', 'b', 'c']);
      expect(ids(await storage.clients.listPage(3, { createdAt: t, clientId: 'b' }))).toEqual(['c', 'd']);
      expect(ids(await storage.clients.listPage(1, { createdAt: t, clientId: 'a' }))).toEqual(['b']);
    });

    it('lists clients made in the same millisecond by id, compared byte-wise', async () => {
      const storage = subject();
      for (const clientId of ['b', 'C', 'a']) await storage.clients.create(newClient({ clientId }));
      expect((await storage.clients.list()).map((c) => c.clientId)).toEqual(['C', 'a', 'b']);
    });
  });
}
