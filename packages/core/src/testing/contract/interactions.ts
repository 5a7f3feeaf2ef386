import { describe, expect, it } from 'vitest';
import { StorageConflictError } from '../../ports/storage.js';
import { at, newInteraction, newUpstream } from './records.js';
import type { StorageUnderTest } from './subject.js';

export function interactionsContract(subject: StorageUnderTest): void {
  describe('interactions', () => {
    it('creates an interaction and reads it back exactly, request included', async () => {
      const storage = subject();
      await storage.interactions.create(newInteraction());
      expect(await storage.interactions.findById('i-1')).toStrictEqual(newInteraction());
      expect(await storage.interactions.findById('missing')).toBeUndefined();
      const attempt = storage.interactions.create(newInteraction());
      await expect(attempt).rejects.toBeInstanceOf(StorageConflictError);
      await expect(attempt).rejects.toMatchObject({ field: 'id' });
    });

    it('records the signed-in user; a missing interaction is left alone', async () => {
      const storage = subject();
      await storage.interactions.create(newInteraction());
      const authTime = at('2026-01-01T10:05:00.000Z');
      await storage.interactions.setUser('i-1', 'u-alice', authTime);
      expect(await storage.interactions.findById('i-1')).toStrictEqual(
        newInteraction({ userId: 'u-alice', authTime }),
      );
      await storage.interactions.setUser('missing', 'u-alice', authTime);
      expect(await storage.interactions.findById('missing')).toBeUndefined();
    });

    it('holds a user owing a second factor until setUser records the sign-in and its amr', async () => {
      const storage = subject();
      await storage.interactions.create(newInteraction());
      await storage.interactions.setPendingUser('i-1', 'u-alice', newUpstream());
      expect(await storage.interactions.findById('i-1')).toStrictEqual(
        newInteraction({ pendingUserId: 'u-alice', pendingUpstream: newUpstream() }),
      );
      const authTime = at('2026-01-01T10:05:00.000Z');
      await storage.interactions.setUser('i-1', 'u-alice', authTime, ['pwd', 'otp', 'mfa']);
      expect(await storage.interactions.findById('i-1')).toStrictEqual(
        newInteraction({ userId: 'u-alice', authTime, amr: ['pwd', 'otp', 'mfa'] }),
      );
    });

    it('removes an interaction and says whether it was there', async () => {
      const storage = subject();
      await storage.interactions.create(newInteraction());
      await storage.interactions.create(newInteraction({ id: 'i-2' }));
      expect(await storage.interactions.remove('i-1')).toBe(true);
      expect(await storage.interactions.remove('i-1')).toBe(false);
      expect(await storage.interactions.findById('i-1')).toBeUndefined();
      expect(await storage.interactions.findById('i-2')).toBeDefined();
    });

    it('purges interactions that expired before now, and counts them', async () => {
      const storage = subject();
      await storage.interactions.create(
        newInteraction({ id: 'old', expiresAt: at('2026-01-01T10:29:59.999Z') }),
      );
      await storage.interactions.create(
        newInteraction({ id: 'edge', expiresAt: at('2026-01-01T10:30:00.000Z') }),
      );
      await storage.interactions.create(
        newInteraction({ id: 'live', expiresAt: at('2026-01-01T11:00:00.000Z') }),
      );
      const now = at('2026-01-01T10:30:00.000Z');
      expect(await storage.interactions.purgeExpired(now)).toBe(1);
      expect(await storage.interactions.purgeExpired(now)).toBe(0);
      expect(await storage.interactions.findById('old')).toBeUndefined();
      expect(await storage.interactions.findById('edge')).toBeDefined();
      expect(await storage.interactions.findById('live')).toBeDefined();
    });
  });
}
