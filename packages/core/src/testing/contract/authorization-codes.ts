import { describe, expect, it } from 'vitest';
import { StorageConflictError } from '../../ports/storage.js';
import { at, newCode, newGrant, newUpstream } from './records.js';
import type { StorageUnderTest } from './subject.js';

const REDEEMED_AT = at('2026-01-01T10:00:30.000Z');

export function authorizationCodesContract(subject: StorageUnderTest): void {
  describe('authorization codes', () => {
    it('redeems a code once; every later presentation is a replay showing the first redemption', async () => {
      const storage = subject();
      await storage.authorizationCodes.create(newCode());
      expect(await storage.authorizationCodes.redeem(newCode().hash, REDEEMED_AT)).toStrictEqual({
        status: 'redeemed',
        code: newCode({ consumedAt: REDEEMED_AT }),
      });
      await storage.authorizationCodes.openGrant(newCode().hash, newGrant());
      expect(
        await storage.authorizationCodes.redeem(newCode().hash, at('2026-01-01T10:00:40.000Z')),
      ).toStrictEqual({
        status: 'replayed',
        code: newCode({ consumedAt: REDEEMED_AT, grantId: 'g-1' }),
      });
    });

    it('round-trips a code without PKCE, nonce or session', async () => {
      const storage = subject();
      const code = newCode({ nonce: null, codeChallenge: null, codeChallengeMethod: null, sessionId: null });
      await storage.authorizationCodes.create(code);
      expect(await storage.authorizationCodes.redeem(code.hash, REDEEMED_AT)).toStrictEqual({
        status: 'redeemed',
        code: { ...code, consumedAt: REDEEMED_AT },
      });
    });

    it("hands on the upstream identity and the amr of the session's sign-in", async () => {
      const storage = subject();
      const code = newCode({ upstream: newUpstream(), amr: ['pwd', 'otp', 'mfa'] });
      await storage.authorizationCodes.create(code);
      expect(await storage.authorizationCodes.redeem(code.hash, REDEEMED_AT)).toStrictEqual({
        status: 'redeemed',
        code: { ...code, consumedAt: REDEEMED_AT },
      });
    });

    it('says unknown for a hash it never stored', async () => {
      const storage = subject();
      expect(await storage.authorizationCodes.redeem('nope', REDEEMED_AT)).toStrictEqual({
        status: 'unknown',
      });
    });

    it('opens the grant of a redeemed code and points the code at it, both or neither', async () => {
      const storage = subject();
      await storage.authorizationCodes.create(newCode());
      await storage.authorizationCodes.redeem(newCode().hash, REDEEMED_AT);
      const grant = newGrant({ upstream: newUpstream() });
      expect(await storage.authorizationCodes.openGrant(newCode().hash, grant)).toStrictEqual(grant);
      expect(await storage.grants.findById(grant.id)).toStrictEqual(grant);
      expect(await storage.authorizationCodes.redeem(newCode().hash, REDEEMED_AT)).toMatchObject({
        status: 'replayed',
        code: { grantId: grant.id },
      });

      // A grant id already taken: a conflict, and neither the grant nor the other code changes.
      const other = newCode({ hash: 'other-code-hash' });
      await storage.authorizationCodes.create(other);
      const taken = storage.authorizationCodes.openGrant(other.hash, newGrant({ userId: 'u-bob' }));
      await expect(taken).rejects.toBeInstanceOf(StorageConflictError);
      await expect(taken).rejects.toMatchObject({ field: 'id' });
      expect(await storage.grants.findById(grant.id)).toStrictEqual(grant);
      expect(await storage.authorizationCodes.redeem(other.hash, REDEEMED_AT)).toMatchObject({
        status: 'redeemed',
        code: { grantId: null },
      });
    });

    it('rejects a duplicate hash with a hash conflict', async () => {
      const storage = subject();
      await storage.authorizationCodes.create(newCode());
      const attempt = storage.authorizationCodes.create(newCode({ userId: 'u-bob' }));
      await expect(attempt).rejects.toBeInstanceOf(StorageConflictError);
      await expect(attempt).rejects.toMatchObject({ field: 'hash' });
    });

    it('lets exactly one of many concurrent redemptions win', async () => {
      const storage = subject();
      await storage.authorizationCodes.create(newCode());
      const instants = Array.from({ length: 10 }, (_, i) => new Date(REDEEMED_AT.getTime() + i));
      const results = await Promise.all(
        instants.map((instant) => storage.authorizationCodes.redeem(newCode().hash, instant)),
      );
      expect(results.filter((r) => r.status === 'redeemed')).toHaveLength(1);
      expect(results.filter((r) => r.status === 'replayed')).toHaveLength(9);
      // Every caller sees the one winning redemption instant.
      const consumedAt = results.map((r) => (r.status === 'unknown' ? null : r.code.consumedAt?.getTime()));
      expect(new Set(consumedAt).size).toBe(1);
    });

    it('purges codes that expired before now, and counts them', async () => {
      const storage = subject();
      await storage.authorizationCodes.create(
        newCode({ hash: 'old', expiresAt: at('2026-01-01T10:00:59.999Z') }),
      );
      await storage.authorizationCodes.create(
        newCode({ hash: 'edge', expiresAt: at('2026-01-01T10:01:00.000Z') }),
      );
      await storage.authorizationCodes.create(
        newCode({ hash: 'live', expiresAt: at('2026-01-01T10:05:00.000Z') }),
      );
      const now = at('2026-01-01T10:01:00.000Z');
      expect(await storage.authorizationCodes.purgeExpired(now)).toBe(1);
      expect(await storage.authorizationCodes.purgeExpired(now)).toBe(0);
      expect((await storage.authorizationCodes.redeem('old', now)).status).toBe('unknown');
      expect((await storage.authorizationCodes.redeem('edge', now)).status).toBe('redeemed');
      expect((await storage.authorizationCodes.redeem('live', now)).status).toBe('redeemed');
    });
  });
}
