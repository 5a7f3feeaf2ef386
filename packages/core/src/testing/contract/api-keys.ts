import { describe, expect, it } from 'vitest';
import { StorageConflictError } from '../../ports/storage.js';
import { at, newApiKey } from './records.js';
import type { StorageUnderTest } from './subject.js';

export function apiKeysContract(subject: StorageUnderTest): void {
  describe('API keys', () => {
    it('creates a key and finds it by prefix exactly', async () => {
      const storage = subject();
      const key = newApiKey({ scopes: ['tokenreview', 'admin'] });
      expect(await storage.apiKeys.create(key)).toStrictEqual(key);
      expect(await storage.apiKeys.findByPrefix('idg_ab12cd34')).toStrictEqual(key);
      expect(await storage.apiKeys.findByPrefix('idg_AB12CD34')).toBeUndefined();
      expect(await storage.apiKeys.findByPrefix('idg_zzzzzzzz')).toBeUndefined();
    });

    it('round-trips set lastUsedAt and revokedAt dates', async () => {
      const storage = subject();
      const key = newApiKey({
        lastUsedAt: at('2026-01-05T06:07:08.009Z'),
        revokedAt: at('2026-01-06T00:00:00.001Z'),
      });
      await storage.apiKeys.create(key);
      expect(await storage.apiKeys.findByPrefix(key.prefix)).toStrictEqual(key);
    });

    it('rejects a duplicate prefix with a prefix conflict and a duplicate id with an id conflict', async () => {
      const storage = subject();
      await storage.apiKeys.create(newApiKey());
      const samePrefix = storage.apiKeys.create(newApiKey({ id: 'k-2' }));
      await expect(samePrefix).rejects.toBeInstanceOf(StorageConflictError);
      await expect(samePrefix).rejects.toMatchObject({ field: 'prefix' });
      await expect(storage.apiKeys.create(newApiKey({ prefix: 'idg_00000000' }))).rejects.toMatchObject({
        field: 'id',
      });
      expect(await storage.apiKeys.count()).toBe(1);
    });

    it('lists keys by creation time, revoked ones included', async () => {
      const storage = subject();
      await storage.apiKeys.create(
        newApiKey({ id: 'k-b', prefix: 'idg_bbbbbbbb', createdAt: at('2026-01-02T00:00:00Z') }),
      );
      await storage.apiKeys.create(
        newApiKey({
          id: 'k-a',
          prefix: 'idg_aaaaaaaa',
          createdAt: at('2026-01-03T00:00:00Z'),
          revokedAt: at('2026-01-04T00:00:00Z'),
        }),
      );
      await storage.apiKeys.create(
        newApiKey({ id: 'k-c', prefix: 'idg_cccccccc', createdAt: at('2026-01-01T00:00:00Z') }),
      );
      expect((await storage.apiKeys.list()).map((k) => k.id)).toEqual(['k-c', 'k-b', 'k-a']);
      expect(await storage.apiKeys.count()).toBe(3);
    });

    it('revokes by id once', async () => {
      const storage = subject();
      await storage.apiKeys.create(newApiKey());
      expect(await storage.apiKeys.revoke('k-1', at('2026-02-01T00:00:00.000Z'))).toBe(true);
      expect(await storage.apiKeys.revoke('k-1', at('2026-03-01T00:00:00.000Z'))).toBe(false);
      // The first revocation time stays.
      expect((await storage.apiKeys.findByPrefix('idg_ab12cd34'))?.revokedAt).toStrictEqual(
        at('2026-02-01T00:00:00.000Z'),
      );
    });

    it('revokes by prefix once', async () => {
      const storage = subject();
      await storage.apiKeys.create(newApiKey());
      expect(await storage.apiKeys.revoke('idg_ab12cd34', at('2026-02-01T00:00:00.000Z'))).toBe(true);
      expect(await storage.apiKeys.revoke('idg_ab12cd34', at('2026-02-02T00:00:00.000Z'))).toBe(false);
      expect(await storage.apiKeys.revoke('k-1', at('2026-02-02T00:00:00.000Z'))).toBe(false);
      expect((await storage.apiKeys.findByPrefix('idg_ab12cd34'))?.revokedAt).toStrictEqual(
        at('2026-02-01T00:00:00.000Z'),
      );
    });

    it('returns false when revoking an unknown key and touches no other key', async () => {
      const storage = subject();
      await storage.apiKeys.create(newApiKey());
      expect(await storage.apiKeys.revoke('nope', at('2026-02-01T00:00:00Z'))).toBe(false);
      expect((await storage.apiKeys.findByPrefix('idg_ab12cd34'))?.revokedAt).toBeNull();
    });

    it('revokes only the key whose id matches when another key has that string as prefix', async () => {
      const storage = subject();
      await storage.apiKeys.create(newApiKey({ id: 'idg_11111111', prefix: 'idg_22222222' }));
      await storage.apiKeys.create(newApiKey({ id: 'k-2', prefix: 'idg_11111111' }));
      expect(await storage.apiKeys.revoke('idg_11111111', at('2026-02-01T00:00:00Z'))).toBe(true);
      expect((await storage.apiKeys.findByPrefix('idg_22222222'))?.revokedAt).toStrictEqual(
        at('2026-02-01T00:00:00Z'),
      );
      expect((await storage.apiKeys.findByPrefix('idg_11111111'))?.revokedAt).toBeNull();
    });

    it('touch records the last use and ignores unknown ids', async () => {
      const storage = subject();
      await storage.apiKeys.create(newApiKey());
      await storage.apiKeys.touch('k-1', at('2026-01-10T10:10:10.010Z'));
      await storage.apiKeys.touch('missing', at('2026-01-10T10:10:10.010Z'));
      expect((await storage.apiKeys.findByPrefix('idg_ab12cd34'))?.lastUsedAt).toStrictEqual(
        at('2026-01-10T10:10:10.010Z'),
      );
      expect(await storage.apiKeys.count()).toBe(1);
    });

    it('finds a key by its id exactly', async () => {
      const storage = subject();
      const key = newApiKey({ scopes: ['users:read', 'audit:read'] });
      await storage.apiKeys.create(key);
      expect(await storage.apiKeys.findById('k-1')).toStrictEqual(key);
      expect(await storage.apiKeys.findById('K-1')).toBeUndefined();
      expect(await storage.apiKeys.findById('idg_ab12cd34')).toBeUndefined();
    });

    it('renames a key and changes its expiry, only while it is not revoked', async () => {
      const storage = subject();
      const key = newApiKey({ expiresAt: at('2026-03-01T00:00:00.000Z') });
      await storage.apiKeys.create(key);
      const renamed = await storage.apiKeys.update('k-1', { name: 'renamed' });
      expect(renamed).toStrictEqual({ ...key, name: 'renamed' });
      const later = await storage.apiKeys.update('k-1', { expiresAt: at('2026-04-01T00:00:00.001Z') });
      expect(later).toStrictEqual({ ...key, name: 'renamed', expiresAt: at('2026-04-01T00:00:00.001Z') });
      const never = await storage.apiKeys.update('k-1', { name: 'both', expiresAt: null });
      expect(never).toStrictEqual({ ...key, name: 'both', expiresAt: null });
      expect(await storage.apiKeys.findByPrefix(key.prefix)).toStrictEqual(never);
      expect(await storage.apiKeys.update('k-1', {})).toStrictEqual(never);
      expect(await storage.apiKeys.update('missing', { name: 'x' })).toBeUndefined();

      await storage.apiKeys.revoke('k-1', at('2026-02-01T00:00:00.000Z'));
      expect(await storage.apiKeys.update('k-1', { name: 'after' })).toBeUndefined();
      expect(await storage.apiKeys.update('k-1', {})).toBeUndefined();
      expect((await storage.apiKeys.findById('k-1'))?.name).toBe('both');
    });

    it('lists keys made in the same millisecond by id, compared byte-wise', async () => {
      const storage = subject();
      for (const [id, prefix] of [
        ['k-b', 'idg_bbbbbbbb'],
        ['K-c', 'idg_cccccccc'],
        ['k-a', 'idg_aaaaaaaa'],
      ] as const)
        await storage.apiKeys.create(newApiKey({ id, prefix }));
      expect((await storage.apiKeys.list()).map((k) => k.id)).toEqual(['K-c', 'k-a', 'k-b']);
      expect((await storage.apiKeys.listPage(2)).map((k) => k.id)).toEqual(['K-c', 'k-a']);
      const after = { createdAt: newApiKey().createdAt, id: 'k-a' };
      expect((await storage.apiKeys.listPage(2, after)).map((k) => k.id)).toEqual(['k-b']);
    });
  });
}
