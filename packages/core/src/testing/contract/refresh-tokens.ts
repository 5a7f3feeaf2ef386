import { describe, expect, it } from 'vitest';
import { StorageConflictError } from '../../ports/storage.js';
import { at, newRefreshToken } from './records.js';
import type { StorageUnderTest } from './subject.js';

const USED_AT = at('2026-01-02T10:00:00.000Z');

export function refreshTokensContract(subject: StorageUnderTest): void {
  describe('refresh tokens', () => {
    it('creates a token and finds it by hash', async () => {
      const storage = subject();
      const token = newRefreshToken();
      await storage.refreshTokens.create(token);
      expect(await storage.refreshTokens.findByHash(token.hash)).toStrictEqual(token);
      expect(await storage.refreshTokens.findByHash('missing')).toBeUndefined();
      const attempt = storage.refreshTokens.create(newRefreshToken({ grantId: 'g-2' }));
      await expect(attempt).rejects.toBeInstanceOf(StorageConflictError);
      await expect(attempt).rejects.toMatchObject({ field: 'hash' });
    });

    it('rotates a token once; every later use is reuse showing the first use', async () => {
      const storage = subject();
      await storage.refreshTokens.create(newRefreshToken());
      const hash = newRefreshToken().hash;
      expect(await storage.refreshTokens.use(hash, USED_AT)).toStrictEqual({
        status: 'rotated',
        token: newRefreshToken({ usedAt: USED_AT }),
      });
      expect(await storage.refreshTokens.use(hash, at('2026-01-03T00:00:00.000Z'))).toStrictEqual({
        status: 'reused',
        token: newRefreshToken({ usedAt: USED_AT }),
      });
      expect(await storage.refreshTokens.findByHash(hash)).toStrictEqual(
        newRefreshToken({ usedAt: USED_AT }),
      );
      expect(await storage.refreshTokens.use('missing', USED_AT)).toStrictEqual({ status: 'unknown' });
    });

    it('lets exactly one of many concurrent uses rotate', async () => {
      const storage = subject();
      await storage.refreshTokens.create(newRefreshToken());
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          storage.refreshTokens.use(newRefreshToken().hash, new Date(USED_AT.getTime() + i)),
        ),
      );
      expect(results.filter((r) => r.status === 'rotated')).toHaveLength(1);
      expect(results.filter((r) => r.status === 'reused')).toHaveLength(9);
      const usedAt = new Set(results.map((r) => (r.status === 'unknown' ? null : r.token.usedAt?.getTime())));
      expect(usedAt.size).toBe(1);
    });

    it('purges tokens that expired before now, and counts them', async () => {
      const storage = subject();
      await storage.refreshTokens.create(
        newRefreshToken({ hash: 'old', expiresAt: at('2026-01-01T00:00:00Z') }),
      );
      await storage.refreshTokens.create(
        newRefreshToken({ hash: 'edge', expiresAt: at('2026-01-05T00:00:00Z') }),
      );
      await storage.refreshTokens.create(
        newRefreshToken({ hash: 'live', expiresAt: at('2026-02-01T00:00:00Z') }),
      );
      const now = at('2026-01-05T00:00:00Z');
      expect(await storage.refreshTokens.purgeExpired(now)).toBe(1);
      expect(await storage.refreshTokens.purgeExpired(now)).toBe(0);
      expect(await storage.refreshTokens.findByHash('old')).toBeUndefined();
      expect(await storage.refreshTokens.findByHash('edge')).toBeDefined();
      expect(await storage.refreshTokens.findByHash('live')).toBeDefined();
    });
  });
}
