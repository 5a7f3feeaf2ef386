import { describe, expect, it } from 'vitest';
import { ADDRESS_LIFT } from '../../security/login-throttle.js';
import { at, newLoginAttempt, newSigningKey } from './records.js';
import type { StorageUnderTest } from './subject.js';

const NOON = at('2026-01-01T12:00:00.000Z');

/** The storage of incident response: not-befores, keys withdrawn at once, lifted address blocks. */
export function incidentContract(subject: StorageUnderTest): void {
  describe('not-befores', () => {
    it('keeps the later instant of a scope and subject, and answers the latest that covers a token', async () => {
      const storage = subject();
      const raise = (scope: 'global' | 'client' | 'user', subject: string, iso: string) =>
        storage.notBefore.raise({ scope, subject, notBefore: at(iso), setAt: NOON });
      expect(await storage.notBefore.latestFor('cl_a', 'u1')).toBeUndefined();
      await raise('user', 'u1', '2026-01-01T10:00:00.000Z');
      expect((await raise('user', 'u1', '2026-01-01T09:00:00.000Z')).notBefore).toEqual(
        at('2026-01-01T10:00:00.000Z'),
      );
      expect((await raise('user', 'u1', '2026-01-01T11:00:00.000Z')).notBefore).toEqual(
        at('2026-01-01T11:00:00.000Z'),
      );
      await raise('client', 'cl_a', '2026-01-01T11:30:00.000Z');
      await raise('global', '', '2026-01-01T08:00:00.000Z');
      expect(await storage.notBefore.latestFor('cl_a', 'u1')).toEqual(at('2026-01-01T11:30:00.000Z'));
      expect(await storage.notBefore.latestFor('cl_b', 'u1')).toEqual(at('2026-01-01T11:00:00.000Z'));
      expect(await storage.notBefore.latestFor('cl_b', null)).toEqual(at('2026-01-01T08:00:00.000Z'));
      expect(await storage.notBefore.latestFor(null, 'u2')).toEqual(at('2026-01-01T08:00:00.000Z'));
      expect((await storage.notBefore.list()).map((n) => [n.scope, n.subject])).toEqual([
        ['global', ''],
        ['client', 'cl_a'],
        ['user', 'u1'],
      ]);
      expect(await storage.notBefore.find('user', 'u1')).toMatchObject({ setAt: NOON });
      expect(await storage.notBefore.find('user', 'u2')).toBeUndefined();
    });
  });

  describe('signing keys withdrawn at once', () => {
    it('takes an active or a retired key out at the instant, once', async () => {
      const storage = subject();
      await storage.signingKeys.insert(newSigningKey({ kid: 'active' }));
      await storage.signingKeys.insert(
        newSigningKey({
          kid: 'retired',
          retiredAt: at('2026-01-01T11:00:00.000Z'),
          publishedUntil: at('2026-01-02T00:00:00.000Z'),
        }),
      );
      expect(await storage.signingKeys.withdraw('active', NOON)).toBe(true);
      expect(await storage.signingKeys.withdraw('retired', NOON)).toBe(true);
      expect(await storage.signingKeys.withdraw('retired', NOON)).toBe(false);
      expect(await storage.signingKeys.withdraw('missing', NOON)).toBe(false);
      const keys = new Map((await storage.signingKeys.list()).map((k) => [k.kid, k]));
      expect(keys.get('active')).toMatchObject({ retiredAt: NOON, publishedUntil: NOON });
      // Retired earlier: it keeps its retirement, and leaves JWKS now.
      expect(keys.get('retired')).toMatchObject({
        retiredAt: at('2026-01-01T11:00:00.000Z'),
        publishedUntil: NOON,
      });
    });
  });

  describe('address blocks', () => {
    const minute = (n: number) => at(`2026-01-01T10:${String(n).padStart(2, '0')}:00.000Z`);
    const failure = (id: string, m: number, address: string, clientId: string | null = null) =>
      newLoginAttempt({ id, createdAt: minute(m), sourceAddress: address, clientId });
    const lift = (id: string, m: number, address: string) =>
      newLoginAttempt({
        id,
        username: ADDRESS_LIFT.username,
        userId: null,
        provider: ADDRESS_LIFT.provider,
        success: true,
        reason: ADDRESS_LIFT.reason,
        sourceAddress: address,
        createdAt: minute(m),
      });

    it('lists failing addresses per channel and counts only failures after the latest lift', async () => {
      const storage = subject();
      for (const [i, m] of [1, 2, 3].entries())
        await storage.loginAttempts.record(failure(`b${i}`, m, '10.0.0.1'));
      for (const [i, m] of [1, 2].entries())
        await storage.loginAttempts.record(failure(`g${i}`, m, '10.0.0.1', 'cl_a'));
      await storage.loginAttempts.record(failure('c0', 1, '10.0.0.2'));
      const since = minute(0);
      expect(await storage.loginAttempts.failingAddresses(since, 2, 10)).toEqual([
        { address: '10.0.0.1', channel: 'browser', count: 3, latest: minute(3) },
        { address: '10.0.0.1', channel: 'grant', count: 2, latest: minute(2) },
      ]);
      await storage.loginAttempts.record(lift('l1', 4, '10.0.0.1'));
      expect(await storage.loginAttempts.failingAddresses(since, 1, 10)).toEqual([
        { address: '10.0.0.2', channel: 'browser', count: 1, latest: minute(1) },
      ]);
      expect(await storage.loginAttempts.failuresFromAddress('10.0.0.1', since)).toEqual({
        count: 0,
        latest: null,
      });
      await storage.loginAttempts.record(failure('b9', 5, '10.0.0.1'));
      expect(
        await storage.loginAttempts.failuresFromAddress('10.0.0.1', since, { channel: 'browser' }),
      ).toEqual({
        count: 1,
        latest: minute(5),
      });
      await storage.loginAttempts.record(lift('l2', 6, ADDRESS_LIFT.everyAddress));
      expect(await storage.loginAttempts.failingAddresses(since, 1, 10)).toEqual([]);
    });
  });
}
