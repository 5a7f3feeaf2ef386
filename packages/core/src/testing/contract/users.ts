import { describe, expect, it } from 'vitest';
import { StorageConflictError } from '../../ports/storage.js';
import { at, newUser } from './records.js';
import type { StorageUnderTest } from './subject.js';

export function usersContract(subject: StorageUnderTest): void {
  describe('users', () => {
    it('creates a user and reads it back exactly', async () => {
      const storage = subject();
      const created = await storage.users.create(newUser());
      const expected = {
        id: 'u-alice',
        username: 'alice',
        email: 'alice@example.com',
        displayName: 'Alice Liddell',
        groups: ['devs', 'platform-admins'],
        passwordHash: '$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA',
        disabled: false,
        createdAt: at('2026-01-02T03:04:05.678Z'),
        updatedAt: at('2026-01-02T03:04:05.678Z'),
      };
      expect(created).toStrictEqual(expected);
      expect(await storage.users.findById('u-alice')).toStrictEqual(expected);
      expect(created.createdAt).toBeInstanceOf(Date);
    });

    it('keeps nulls, empty groups and disabled=true', async () => {
      const storage = subject();
      await storage.users.create(
        newUser({
          id: 'u-bot',
          username: 'bot',
          email: null,
          displayName: null,
          passwordHash: null,
          groups: [],
          disabled: true,
        }),
      );
      const found = await storage.users.findById('u-bot');
      expect(found).toMatchObject({
        email: null,
        displayName: null,
        passwordHash: null,
        groups: [],
        disabled: true,
      });
    });

    it('finds users by email regardless of case, every one that shares it, and nobody for null', async () => {
      const storage = subject();
      await storage.users.create(newUser({ id: 'u-a', username: 'alice', email: 'Alice@Example.com' }));
      await storage.users.create(newUser({ id: 'u-b', username: 'bob', email: 'alice@example.COM' }));
      await storage.users.create(newUser({ id: 'u-c', username: 'carol', email: null }));
      expect((await storage.users.findByEmail('ALICE@example.com')).map((u) => u.id)).toEqual(['u-a', 'u-b']);
      expect(await storage.users.findByEmail('nobody@example.com')).toEqual([]);
      expect(await storage.users.findByEmail('')).toEqual([]);
    });

    it('rejects a username that exists in another case with a username conflict', async () => {
      const storage = subject();
      await storage.users.create(newUser({ username: 'Alice' }));
      const attempt = storage.users.create(newUser({ id: 'u-other', username: 'aLiCe' }));
      await expect(attempt).rejects.toBeInstanceOf(StorageConflictError);
      await expect(attempt).rejects.toMatchObject({ name: 'StorageConflictError', field: 'username' });
      expect(await storage.users.count()).toBe(1);
    });

    it('rejects a duplicate id with an id conflict', async () => {
      const storage = subject();
      await storage.users.create(newUser());
      await expect(storage.users.create(newUser({ username: 'bob' }))).rejects.toMatchObject({ field: 'id' });
    });

    it('finds a user by username in any case, keeping the stored spelling', async () => {
      const storage = subject();
      await storage.users.create(newUser({ username: 'Alice.Smith' }));
      for (const spelling of ['alice.smith', 'ALICE.SMITH', 'Alice.Smith']) {
        expect((await storage.users.findByUsername(spelling))?.id).toBe('u-alice');
      }
      expect((await storage.users.findByUsername('Alice.Smith'))?.username).toBe('Alice.Smith');
      expect(await storage.users.findByUsername('alice')).toBeUndefined();
      expect(await storage.users.findById('nobody')).toBeUndefined();
    });

    it('lists users ordered by username regardless of case', async () => {
      const storage = subject();
      for (const [id, username] of [
        ['1', 'carol'],
        ['2', 'Bob'],
        ['3', 'alice'],
        ['4', 'Dave'],
      ] as const) {
        await storage.users.create(newUser({ id, username }));
      }
      expect((await storage.users.list()).map((u) => u.username)).toEqual(['alice', 'Bob', 'carol', 'Dave']);
      expect(await storage.users.count()).toBe(4);
    });

    it('returns an empty list and zero count for no users', async () => {
      const storage = subject();
      expect(await storage.users.list()).toEqual([]);
      expect(await storage.users.count()).toBe(0);
    });

    it('updates only the patched fields and updatedAt', async () => {
      const storage = subject();
      await storage.users.create(newUser());
      const updated = await storage.users.update('u-alice', {
        groups: ['auditors'],
        disabled: true,
        email: null,
        updatedAt: at('2026-02-01T00:00:00.000Z'),
      });
      const expected = {
        ...newUser(),
        groups: ['auditors'],
        disabled: true,
        email: null,
        updatedAt: at('2026-02-01T00:00:00.000Z'),
      };
      expect(updated).toStrictEqual(expected);
      expect(await storage.users.findById('u-alice')).toStrictEqual(expected);
    });

    it('can clear a password and re-enable a user', async () => {
      const storage = subject();
      await storage.users.create(newUser({ disabled: true }));
      const updated = await storage.users.update('u-alice', {
        passwordHash: null,
        displayName: 'A.',
        disabled: false,
        updatedAt: at('2026-03-01T00:00:00.000Z'),
      });
      expect(updated).toMatchObject({ passwordHash: null, displayName: 'A.', disabled: false });
    });

    it('returns undefined when updating an unknown user', async () => {
      const storage = subject();
      expect(await storage.users.update('nobody', { disabled: true, updatedAt: new Date() })).toBeUndefined();
      expect(await storage.users.count()).toBe(0);
    });
  });
}
