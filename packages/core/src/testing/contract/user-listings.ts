import { describe, expect, it } from 'vitest';
import type { Storage } from '../../ports/storage.js';
import { at, newLoginAttempt, newUser } from './records.js';
import type { StorageUnderTest } from './subject.js';

const NOW = at('2026-01-01T12:00:00.000Z');
const minutesAgo = (n: number) => new Date(NOW.getTime() - n * 60_000);
const LOCK = { now: NOW, maxFailures: 3, windowSeconds: 900 };

/** alice, Bob (disabled), carol, dave, erin: the users every listing below pages through. */
async function seedUsers(storage: Storage): Promise<void> {
  const users = [
    newUser({ id: 'u-erin', username: 'erin', email: null, groups: [] }),
    newUser({ id: 'u-carol', username: 'carol', email: 'carol@Example.org', groups: ['devs', 'Ops'] }),
    newUser({ id: 'u-bob', username: 'Bob', email: 'bob@example.com', groups: ['devs'], disabled: true }),
    newUser({ id: 'u-dave', username: 'dave', displayName: 'D_S', email: null, groups: ['ops'] }),
    newUser({ id: 'u-alice', username: 'alice', displayName: null, groups: ['devs'] }),
  ];
  for (const user of users) await storage.users.create(user);
}

const names = (users: { username: string }[]) => users.map((u) => u.username);

export function userListingsContract(subject: StorageUnderTest): void {
  describe('user pages and groups', () => {
    it('pages by lower-cased username after a position, at most a limit', async () => {
      const storage = subject();
      await seedUsers(storage);
      expect(names(await storage.users.page({ limit: 2 }))).toEqual(['alice', 'Bob']);
      expect(names(await storage.users.page({ limit: 2, after: 'bob' }))).toEqual(['carol', 'dave']);
      expect(names(await storage.users.page({ limit: 10, after: 'dave' }))).toEqual(['erin']);
      expect(await storage.users.page({ limit: 10, after: 'erin' })).toEqual([]);
    });

    it('filters by group (exact case), by state and by text in any case, LIKE wildcards taken literally', async () => {
      const storage = subject();
      await seedUsers(storage);
      expect(names(await storage.users.page({ limit: 10, group: 'devs' }))).toEqual([
        'alice',
        'Bob',
        'carol',
      ]);
      expect(names(await storage.users.page({ limit: 10, group: 'ops' }))).toEqual(['dave']);
      expect(await storage.users.page({ limit: 10, group: 'DEVS' })).toEqual([]);
      expect(names(await storage.users.page({ limit: 10, status: 'disabled' }))).toEqual(['Bob']);
      expect(names(await storage.users.page({ limit: 10, text: 'EXAMPLE.ORG' }))).toEqual(['carol']);
      expect(names(await storage.users.page({ limit: 10, text: 'b' }))).toEqual(['Bob']);
      expect(names(await storage.users.page({ limit: 10, text: 'LIDDELL' }))).toEqual([
        'Bob',
        'carol',
        'erin',
      ]);
      expect(names(await storage.users.page({ limit: 10, text: '_' }))).toEqual(['dave']);
      expect(await storage.users.page({ limit: 10, text: '%' })).toEqual([]);
      expect(names(await storage.users.page({ limit: 1, group: 'devs', after: 'alice' }))).toEqual(['Bob']);
    });

    it('tells locked accounts from active ones as the login throttle does', async () => {
      const storage = subject();
      await seedUsers(storage);
      const fail = (id: string, username: string, ago: number, provider = 'password') =>
        storage.loginAttempts.record(newLoginAttempt({ id, username, createdAt: minutesAgo(ago), provider }));
      // erin: three failures within the window, the latest 5 minutes ago: locked.
      for (const [id, ago] of [
        ['e-1', 20],
        ['e-2', 10],
        ['e-3', 5],
      ] as const)
        await fail(id, 'erin', ago);
      // dave: three failures, but a success after the first: not locked.
      await fail('d-1', 'dave', 12);
      await storage.loginAttempts.record(
        newLoginAttempt({
          id: 'd-2',
          username: 'dave',
          success: true,
          reason: null,
          createdAt: minutesAgo(11),
        }),
      );
      await fail('d-3', 'dave', 10);
      await fail('d-4', 'dave', 9);
      // carol: three failures at another provider, and three local ones that ended 16 minutes ago.
      for (const id of ['c-1', 'c-2', 'c-3']) await fail(id, 'carol', 1, 'corp');
      for (const id of ['c-4', 'c-5', 'c-6']) await fail(id, 'carol', 16);
      // Bob, disabled, is locked as well.
      for (const id of ['b-1', 'b-2', 'b-3']) await fail(id, 'BOB', 2);
      expect(names(await storage.users.page({ limit: 10, status: 'locked', lock: LOCK }))).toEqual([
        'Bob',
        'erin',
      ]);
      expect(names(await storage.users.page({ limit: 10, status: 'active', lock: LOCK }))).toEqual([
        'alice',
        'carol',
        'dave',
      ]);
      // Without a lock policy nobody is locked.
      expect(await storage.users.page({ limit: 10, status: 'locked' })).toEqual([]);
    });

    it('counts the members of each group, by name in byte order, after a position, or one group by name', async () => {
      const storage = subject();
      await seedUsers(storage);
      expect(await storage.users.groups({ limit: 10 })).toEqual([
        { name: 'Ops', members: 1 },
        { name: 'devs', members: 3 },
        { name: 'ops', members: 1 },
      ]);
      expect(await storage.users.groups({ limit: 1, after: 'Ops' })).toEqual([{ name: 'devs', members: 3 }]);
      expect(await storage.users.groups({ limit: 10, name: 'ops' })).toEqual([{ name: 'ops', members: 1 }]);
      expect(await storage.users.groups({ limit: 10, name: 'nobody' })).toEqual([]);
    });

    it('removes a user once', async () => {
      const storage = subject();
      await seedUsers(storage);
      expect(await storage.users.remove('u-carol')).toBe(true);
      expect(await storage.users.remove('u-carol')).toBe(false);
      expect(await storage.users.findById('u-carol')).toBeUndefined();
      expect(await storage.users.findByUsername('carol')).toBeUndefined();
      expect(await storage.users.count()).toBe(4);
    });

    it('copies records in and out: changing what was stored or read changes nothing stored', async () => {
      const storage = subject();
      const user = newUser();
      const created = await storage.users.create(user);
      user.groups.push('intruders');
      created.groups.push('intruders');
      const found = await storage.users.findById(user.id);
      found?.groups.push('intruders');
      expect((await storage.users.findById(user.id))?.groups).toEqual(['devs', 'platform-admins']);
    });
  });
}
