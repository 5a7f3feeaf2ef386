import { describe, expect, it } from 'vitest';
import type { GroupRecord } from '../../model.js';
import { StorageConflictError } from '../../ports/storage.js';
import { at, newUser } from './records.js';
import type { StorageUnderTest } from './subject.js';

export function groupsContract(subject: StorageUnderTest): void {
  describe('groups', () => {
    const group = (name: string, overrides: Partial<GroupRecord> = {}): GroupRecord => ({
      name,
      description: null,
      createdAt: at('2026-01-01T00:00:00.001Z'),
      updatedAt: at('2026-01-01T00:00:00.001Z'),
      ...overrides,
    });

    it('creates a group, exactly as named, and refuses its name again with the field name', async () => {
      const storage = subject();
      const dev = group('Dev', { description: 'Developers' });
      expect(await storage.groups.create(dev)).toStrictEqual(dev);
      expect(await storage.groups.find('Dev')).toStrictEqual({ ...dev, members: 0 });
      expect(await storage.groups.find('dev')).toBeUndefined();
      const again = storage.groups.create(group('Dev'));
      await expect(again).rejects.toBeInstanceOf(StorageConflictError);
      await expect(again).rejects.toMatchObject({ field: 'name' });
    });

    it('has a row for every group a user is created or updated with, counted by member', async () => {
      const storage = subject();
      await storage.groups.create(group('devs', { description: 'kept' }));
      await storage.users.create(newUser());
      await storage.users.create(newUser({ id: 'u-bob', username: 'bob', groups: ['devs'] }));
      expect(await storage.groups.find('devs')).toMatchObject({ description: 'kept', members: 2 });
      expect(await storage.groups.find('platform-admins')).toStrictEqual({
        ...group('platform-admins', {
          createdAt: at('2026-01-02T03:04:05.678Z'),
          updatedAt: at('2026-01-02T03:04:05.678Z'),
        }),
        members: 1,
      });
      await storage.users.update('u-bob', { groups: ['ops'], updatedAt: at('2026-03-01T00:00:00.000Z') });
      expect(await storage.groups.find('ops')).toMatchObject({ members: 1 });
      expect(await storage.groups.find('devs')).toMatchObject({ members: 1 });
      expect(await storage.groups.ensure(['ops', 'qa', 'qa'], at('2026-03-02T00:00:00.000Z'))).toEqual([
        'qa',
      ]);
    });

    it('lists groups by name in byte order, empty ones included, a page after another', async () => {
      const storage = subject();
      for (const name of ['b', 'B', 'a-b', 'ab']) await storage.groups.create(group(name));
      await storage.users.create(newUser({ groups: ['ab'] }));
      const page = await storage.groups.page({ limit: 10 });
      expect(page.map((g) => [g.name, g.members])).toEqual([
        ['B', 0],
        ['a-b', 0],
        ['ab', 1],
        ['b', 0],
      ]);
      expect((await storage.groups.page({ limit: 2, after: 'a-b' })).map((g) => g.name)).toEqual(['ab', 'b']);
    });

    it('renames a group or changes its description, and refuses a name taken', async () => {
      const storage = subject();
      await storage.groups.create(group('dev'));
      await storage.groups.create(group('ops'));
      const when = at('2026-02-01T00:00:00.000Z');
      expect(
        await storage.groups.update('dev', { name: 'devs', description: 'D', updatedAt: when }),
      ).toStrictEqual(group('devs', { description: 'D', updatedAt: when }));
      expect(await storage.groups.find('dev')).toBeUndefined();
      await expect(storage.groups.update('devs', { name: 'ops', updatedAt: when })).rejects.toMatchObject({
        field: 'name',
      });
      expect(await storage.groups.update('nope', { description: null, updatedAt: when })).toBeUndefined();
      expect(
        await storage.groups.update('devs', { updatedAt: at('2026-01-03T00:00:00.000Z') }),
      ).toMatchObject({
        description: 'D',
        updatedAt: at('2026-01-03T00:00:00.000Z'),
      });
    });

    it('keeps whether a group requires a second factor, told only when it does', async () => {
      const storage = subject();
      await storage.groups.create(group('ops', { requireMfa: true }));
      await storage.groups.create(group('dev', { requireMfa: false }));
      expect(await storage.groups.find('ops')).toMatchObject({ requireMfa: true });
      expect(await storage.groups.find('dev')).toStrictEqual({ ...group('dev'), members: 0 });
      const when = at('2026-02-01T00:00:00.000Z');
      expect(await storage.groups.update('ops', { requireMfa: false, updatedAt: when })).toStrictEqual(
        group('ops', { updatedAt: when }),
      );
      expect(await storage.groups.update('dev', { requireMfa: true, updatedAt: when })).toStrictEqual(
        group('dev', { requireMfa: true, updatedAt: when }),
      );
      // A change of something else keeps it.
      expect(await storage.groups.update('dev', { description: 'D', updatedAt: when })).toMatchObject({
        requireMfa: true,
      });
    });

    it('removes a group once', async () => {
      const storage = subject();
      await storage.groups.create(group('dev'));
      expect(await storage.groups.remove('dev')).toBe(true);
      expect(await storage.groups.remove('dev')).toBe(false);
    });
  });
}
