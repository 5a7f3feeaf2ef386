import { describe, expect, it } from 'vitest';
import { StorageConflictError } from '../../ports/storage.js';
import { at, newLoginAttempt } from './records.js';
import type { StorageUnderTest } from './subject.js';

const minute = (n: number) => at(`2026-01-01T10:${String(n).padStart(2, '0')}:00.000Z`);
const failure = (id: string, m: number, overrides = {}) =>
  newLoginAttempt({ id, createdAt: minute(m), ...overrides });
const success = (id: string, m: number, overrides = {}) =>
  newLoginAttempt({ id, createdAt: minute(m), success: true, reason: null, ...overrides });

export function loginAttemptsContract(subject: StorageUnderTest): void {
  describe('login attempts', () => {
    it('records attempts and lists a username newest first, up to the limit', async () => {
      const storage = subject();
      const attempts = [
        failure('a-1', 1),
        success('a-2', 2),
        failure('a-3', 3, { userId: null, provider: 'github', reason: 'disabled' }),
        failure('a-4', 4, { username: 'bob', userId: 'u-bob' }),
      ];
      for (const attempt of attempts) await storage.loginAttempts.record(attempt);
      expect(await storage.loginAttempts.listByUsername('alice', 10)).toStrictEqual([
        attempts[2],
        attempts[1],
        attempts[0],
      ]);
      expect((await storage.loginAttempts.listByUsername('ALICE', 2)).map((a) => a.id)).toEqual([
        'a-3',
        'a-2',
      ]);
      expect(await storage.loginAttempts.listByUsername('nobody', 10)).toEqual([]);
      expect(await storage.loginAttempts.listByUsername('alice', 0)).toEqual([]);
    });

    it('orders attempts of the same instant by id, descending', async () => {
      const storage = subject();
      for (const id of ['a-b', 'a-c', 'a-a']) await storage.loginAttempts.record(failure(id, 1));
      expect((await storage.loginAttempts.listByUsername('alice', 10)).map((a) => a.id)).toEqual([
        'a-c',
        'a-b',
        'a-a',
      ]);
    });

    it('stores and compares usernames lower-cased', async () => {
      const storage = subject();
      await storage.loginAttempts.record(failure('a-1', 1, { username: 'Alice' }));
      const [listed] = await storage.loginAttempts.listByUsername('aLiCe', 10);
      expect(listed?.username).toBe('alice');
      expect(await storage.loginAttempts.failuresForUsername('ALICE', minute(0))).toStrictEqual({
        count: 1,
        latest: minute(1),
      });
    });

    it('rejects a duplicate id with an id conflict', async () => {
      const storage = subject();
      await storage.loginAttempts.record(failure('a-1', 1));
      const attempt = storage.loginAttempts.record(failure('a-1', 2));
      await expect(attempt).rejects.toBeInstanceOf(StorageConflictError);
      await expect(attempt).rejects.toMatchObject({ field: 'id' });
    });

    it('counts failures for a username since `since`, only after the latest success', async () => {
      const storage = subject();
      const { loginAttempts } = storage;
      expect(await loginAttempts.failuresForUsername('alice', minute(0))).toStrictEqual({
        count: 0,
        latest: null,
      });
      for (const attempt of [failure('a-1', 1), failure('a-2', 2), failure('a-3', 3)]) {
        await loginAttempts.record(attempt);
      }
      await loginAttempts.record(failure('b-1', 4, { username: 'bob' }));
      expect(await loginAttempts.failuresForUsername('alice', minute(0))).toStrictEqual({
        count: 3,
        latest: minute(3),
      });
      // `since` is inclusive.
      expect(await loginAttempts.failuresForUsername('alice', minute(2))).toStrictEqual({
        count: 2,
        latest: minute(3),
      });
      expect(await loginAttempts.failuresForUsername('alice', minute(5))).toStrictEqual({
        count: 0,
        latest: null,
      });

      await loginAttempts.record(success('a-4', 4));
      expect(await loginAttempts.failuresForUsername('alice', minute(0))).toStrictEqual({
        count: 0,
        latest: null,
      });
      // A failure in the same millisecond as the success is not after it.
      await loginAttempts.record(failure('a-5', 4));
      await loginAttempts.record(failure('a-6', 6));
      await loginAttempts.record(failure('a-7', 7));
      expect(await loginAttempts.failuresForUsername('alice', minute(0))).toStrictEqual({
        count: 2,
        latest: minute(7),
      });
      expect(await loginAttempts.failuresForUsername('alice', minute(7))).toStrictEqual({
        count: 1,
        latest: minute(7),
      });
      // Bob's success does not reset Alice's counter.
      await loginAttempts.record(success('b-2', 8, { username: 'bob' }));
      expect((await loginAttempts.failuresForUsername('alice', minute(0))).count).toBe(2);
    });

    it('counts failures of one reason for a username, from every address, when asked', async () => {
      const storage = subject();
      const { loginAttempts } = storage;
      const code = { username: 'device:user_code', userId: null, provider: 'device' };
      await loginAttempts.record(failure('c-1', 1, { ...code, reason: 'unknown_user_code' }));
      await loginAttempts.record(
        failure('c-2', 2, { ...code, reason: 'unknown_user_code', sourceAddress: '198.51.100.1' }),
      );
      await loginAttempts.record(
        failure('c-3', 3, { ...code, reason: 'locked', sourceAddress: '198.51.100.2' }),
      );
      await loginAttempts.record(failure('c-4', 4, { reason: 'unknown_user_code' }));
      const wrong = { provider: 'device', reason: 'unknown_user_code' };
      expect(await loginAttempts.failuresForUsername('device:user_code', minute(0), wrong)).toStrictEqual({
        count: 2,
        latest: minute(2),
      });
      expect(await loginAttempts.failuresForUsername('device:user_code', minute(2), wrong)).toStrictEqual({
        count: 1,
        latest: minute(2),
      });
      expect(
        await loginAttempts.failuresForUsername('device:user_code', minute(0), { provider: 'device' }),
      ).toStrictEqual({ count: 3, latest: minute(3) });
    });

    it('counts failures from an address since `since`, across usernames, successes notwithstanding', async () => {
      const storage = subject();
      const { loginAttempts } = storage;
      await loginAttempts.record(failure('a-1', 1));
      await loginAttempts.record(failure('a-2', 2, { username: 'bob' }));
      await loginAttempts.record(success('a-3', 3));
      await loginAttempts.record(failure('a-4', 4, { username: 'carol' }));
      await loginAttempts.record(failure('a-5', 5, { sourceAddress: '198.51.100.1' }));
      expect(await loginAttempts.failuresFromAddress('203.0.113.7', minute(0))).toStrictEqual({
        count: 3,
        latest: minute(4),
      });
      expect(await loginAttempts.failuresFromAddress('203.0.113.7', minute(2))).toStrictEqual({
        count: 2,
        latest: minute(4),
      });
      expect(await loginAttempts.failuresFromAddress('192.0.2.1', minute(0))).toStrictEqual({
        count: 0,
        latest: null,
      });
    });

    it('keys accounts by provider: another provider’s failures and successes leave the account alone', async () => {
      const storage = subject();
      const { loginAttempts } = storage;
      await loginAttempts.record(failure('p-1', 1));
      await loginAttempts.record(failure('p-2', 2, { provider: 'corp' }));
      await loginAttempts.record(success('p-3', 3, { provider: 'corp' }));
      await loginAttempts.record(failure('p-4', 4));
      expect(
        await loginAttempts.failuresForUsername('alice', minute(0), { provider: 'password' }),
      ).toStrictEqual({
        count: 2,
        latest: minute(4),
      });
      expect(await loginAttempts.failuresForUsername('alice', minute(0), { provider: 'corp' })).toStrictEqual(
        {
          count: 0,
          latest: null,
        },
      );
    });

    it('counts familiar and unfamiliar failures apart, and knows where an account signed in', async () => {
      const storage = subject();
      const { loginAttempts } = storage;
      await loginAttempts.record(success('f-1', 1, { sourceAddress: '198.51.100.10' }));
      await loginAttempts.record(failure('f-2', 2, { familiar: true, sourceAddress: '198.51.100.10' }));
      await loginAttempts.record(failure('f-3', 3, { sourceAddress: '192.0.2.66' }));
      await loginAttempts.record(failure('f-4', 4, { sourceAddress: '192.0.2.67' }));
      const count = async (familiar: boolean) =>
        (await loginAttempts.failuresForUsername('alice', minute(0), { provider: 'password', familiar }))
          .count;
      expect([await count(true), await count(false)]).toEqual([1, 2]);
      expect(await loginAttempts.hasSucceededFrom('ALICE', 'password', '198.51.100.10')).toBe(true);
      expect(await loginAttempts.hasSucceededFrom('alice', 'corp', '198.51.100.10')).toBe(false);
      expect(await loginAttempts.hasSucceededFrom('alice', 'password', '192.0.2.66')).toBe(false);
      expect((await loginAttempts.listByUsername('alice', 1))[0]).toMatchObject({
        id: 'f-4',
        familiar: false,
        clientId: null,
      });
    });

    it('counts the password grant per client and per address apart from the browser', async () => {
      const storage = subject();
      const { loginAttempts } = storage;
      await loginAttempts.record(failure('c-1', 1, { clientId: 'cl_a' }));
      await loginAttempts.record(failure('c-2', 2, { clientId: 'cl_a', sourceAddress: '192.0.2.5' }));
      await loginAttempts.record(failure('c-3', 3, { clientId: 'cl_b' }));
      await loginAttempts.record(failure('c-4', 4));
      expect(await loginAttempts.failuresForClient('cl_a', minute(0))).toStrictEqual({
        count: 2,
        latest: minute(2),
      });
      const fromAddress = (channel?: 'browser' | 'grant') =>
        loginAttempts.failuresFromAddress('203.0.113.7', minute(0), channel === undefined ? {} : { channel });
      expect((await fromAddress('grant')).count).toBe(2);
      expect((await fromAddress('browser')).count).toBe(1);
      expect((await fromAddress()).count).toBe(3);
    });
  });
}
