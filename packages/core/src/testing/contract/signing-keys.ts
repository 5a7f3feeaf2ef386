import { describe, expect, it } from 'vitest';
import { StorageConflictError } from '../../ports/storage.js';
import { at, newSigningKey } from './records.js';
import type { StorageUnderTest } from './subject.js';

export function signingKeysContract(subject: StorageUnderTest): void {
  describe('signing keys', () => {
    it('inserts keys and lists them newest first, exactly as inserted', async () => {
      const storage = subject();
      const oldest = newSigningKey({
        kid: 'k-old',
        alg: 'RS256',
        publicJwk: { kty: 'RSA', n: 'bm4', e: 'AQAB', key_ops: ['verify'] },
        createdAt: at('2025-12-01T00:00:00.000Z'),
        retiredAt: at('2025-12-15T00:00:00.000Z'),
        publishedUntil: at('2025-12-16T00:00:00.000Z'),
      });
      const newest = newSigningKey({ kid: 'k-new', alg: 'EdDSA', createdAt: at('2026-01-15T00:00:00.000Z') });
      const middle = newSigningKey({ kid: 'k-mid', createdAt: at('2026-01-01T00:00:00.000Z') });
      for (const key of [middle, oldest, newest]) await storage.signingKeys.insert(key);
      expect(await storage.signingKeys.list()).toStrictEqual([newest, middle, oldest]);
    });

    it('rejects a duplicate kid with a kid conflict', async () => {
      const storage = subject();
      await storage.signingKeys.insert(newSigningKey());
      const attempt = storage.signingKeys.insert(newSigningKey({ alg: 'RS256' }));
      await expect(attempt).rejects.toBeInstanceOf(StorageConflictError);
      await expect(attempt).rejects.toMatchObject({ field: 'kid' });
      expect((await storage.signingKeys.list()).map((k) => k.alg)).toEqual(['ES256']);
    });

    it('retires an active key once', async () => {
      const storage = subject();
      await storage.signingKeys.insert(newSigningKey());
      const retiredAt = at('2026-02-01T00:00:00.000Z');
      const publishedUntil = at('2026-02-01T01:00:00.000Z');
      expect(await storage.signingKeys.retire('kid-1', retiredAt, publishedUntil)).toBe(true);
      expect(
        await storage.signingKeys.retire('kid-1', at('2026-03-01T00:00:00Z'), at('2026-03-02T00:00:00Z')),
      ).toBe(false);
      const [key] = await storage.signingKeys.list();
      expect(key).toStrictEqual(newSigningKey({ retiredAt, publishedUntil }));
    });

    it('returns false when retiring an unknown key', async () => {
      const storage = subject();
      expect(await storage.signingKeys.retire('missing', new Date(), new Date())).toBe(false);
      expect(await storage.signingKeys.list()).toEqual([]);
    });

    it('lists keys made in the same millisecond by kid, descending byte-wise', async () => {
      const storage = subject();
      for (const kid of ['a', 'B', 'c']) await storage.signingKeys.insert(newSigningKey({ kid }));
      expect((await storage.signingKeys.list()).map((k) => k.kid)).toEqual(['c', 'a', 'B']);
    });
  });
}
