import { CreateUserInput, PageQuery, UserListQuery } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import { AdminError } from '../../src/admin/errors.js';
import { addGroupMember, listGroupMembers, listGroups, removeGroupMember } from '../../src/admin/groups.js';
import {
  createUser,
  deleteUser,
  listUserPage,
  setUserPassword,
  unlockUser,
  updateUser,
} from '../../src/admin/users.js';
import { userView } from '../../src/admin/views.js';
import { COMMON_PASSWORDS } from '../../src/users/common-passwords.js';
import { checkPasswordPolicy, passwordWeakness } from '../../src/users/password-policy.js';
import { adminPorts, rejection, thrown } from './ports.js';

const user = (username: string, groups: string[] = []) => CreateUserInput.parse({ username, groups });

describe('NIST SP 800-63B password policy', () => {
  it('asks for 12 characters by default, counting code points, and at most 256', () => {
    expect(passwordWeakness('elevenchars', 'alice')).toBe('must be at least 12 characters long');
    expect(passwordWeakness('twelve chars', 'alice')).toBeUndefined();
    expect(passwordWeakness('😀'.repeat(12), 'alice')).toBeUndefined();
    expect(passwordWeakness('a'.repeat(257), 'alice')).toBe('must be at most 256 characters long');
    expect(passwordWeakness('eight ok', 'alice', { minLength: 8 })).toBeUndefined();
  });

  it('refuses the shipped common passwords in any case, and the username', () => {
    expect(COMMON_PASSWORDS.length).toBeGreaterThanOrEqual(1000);
    expect(COMMON_PASSWORDS.every((p) => p.length >= 8 && p === p.toLowerCase())).toBe(true);
    expect(passwordWeakness('Password123!', 'bob')).toBe('is one of the most common passwords');
    expect(passwordWeakness('QWERTYUIOP123', 'bob')).toBe('is one of the most common passwords');
    expect(passwordWeakness('i-am-ALICE-really', 'alice')).toBe('must not contain the username');
    // A one- or two-letter name only refuses itself.
    expect(passwordWeakness('a long passphrase', 'al')).toBeUndefined();
    const error = thrown(() => checkPasswordPolicy('short', 'alice')) as AdminError;
    expect(error).toBeInstanceOf(AdminError);
    expect([error.code, error.status, error.problemCode, error.message]).toEqual([
      'invalid_input',
      400,
      'weak_password',
      'password must be at least 12 characters long',
    ]);
  });

  it('is applied when creating a user or setting a password, never to generated ones', async () => {
    const ports = adminPorts({ passwordPolicy: { minLength: 16 } });
    const weak = (await rejection(createUser(ports, user('ann'), 'fifteen chars!!'))) as AdminError;
    expect(weak.problemCode).toBe('weak_password');
    expect(await ports.storage.users.findByUsername('ann')).toBeUndefined();
    const { generatedPassword } = await createUser(ports, user('ann'));
    expect(generatedPassword).toBeDefined();
    const refused = (await rejection(setUserPassword(ports, 'ann', 'ann-and-her-password'))) as AdminError;
    expect(refused.message).toBe('password must not contain the username');
  });
});

describe('users over the admin use cases', () => {
  it('pages users by lower-cased username, filtered by group, text and status', async () => {
    const ports = adminPorts({
      loginThrottle: { maxFailures: 2, windowSeconds: 900, maxFailuresPerAddress: 100 },
    });
    for (const [name, groups] of [
      ['Cy', ['qa']],
      ['ann', ['qa', 'dev']],
      ['bob', ['dev']],
    ] as const)
      await createUser(ports, user(name, [...groups]));
    const page = (query: Record<string, string>) => listUserPage(ports, UserListQuery.parse(query));
    const first = await page({ limit: '2' });
    expect(first.items.map((u) => u.username)).toEqual(['ann', 'bob']);
    const next = await page({ limit: '2', cursor: first.nextCursor as string });
    expect(next).toMatchObject({ items: [{ username: 'Cy' }], nextCursor: null });
    expect((await page({ group: 'qa' })).items.map((u) => u.username)).toEqual(['ann', 'Cy']);
    expect((await page({ q: 'BO' })).items.map((u) => u.username)).toEqual(['bob']);

    for (let i = 0; i < 2; i++)
      await ports.storage.loginAttempts.record({
        id: `f${i}`,
        username: 'bob',
        userId: null,
        sourceAddress: '203.0.113.1',
        provider: 'password',
        success: false,
        reason: 'invalid_credentials',
        createdAt: new Date(ports.clock.now() - 1000 + i),
      });
    expect((await page({ status: 'locked' })).items.map((u) => u.username)).toEqual(['bob']);
    expect((await page({ status: 'active' })).items.map((u) => u.username)).toEqual(['ann', 'Cy']);
    expect(await unlockUser(ports, 'BOB', { by: 'test' })).toMatchObject({ wasLocked: true });
    expect((await page({ status: 'locked' })).items).toEqual([]);
    expect(await unlockUser(ports, 'bob', { by: 'test' })).toMatchObject({ wasLocked: false });

    const bad = (await rejection(page({ cursor: '_w' }))) as AdminError;
    expect([bad.code, bad.message]).toEqual([
      'invalid_input',
      'cursor: must be the nextCursor of a previous page',
    ]);
  });

  it('updates under If-Match and deletes a user with its sessions and identities', async () => {
    const ports = adminPorts();
    const { user: created } = await createUser(ports, user('dee', ['dev']));
    const etag = userView(created).etag;
    ports.clock.advance(1000);
    const changed = await updateUser(
      ports,
      'DEE',
      { groups: ['ops'], email: 'dee@example.test' },
      { ifMatch: etag },
    );
    expect(changed).toMatchObject({ groups: ['ops'], email: 'dee@example.test' });
    const stale = (await rejection(
      updateUser(ports, 'dee', { disabled: true }, { ifMatch: etag }),
    )) as AdminError;
    expect([stale.code, stale.status]).toEqual(['precondition_failed', 412]);
    expect((await ports.storage.users.findByUsername('dee'))?.disabled).toBe(false);

    await ports.storage.sessions.create({
      id: 's1',
      secretHash: 'h1',
      userId: created.id,
      authTime: new Date(0),
      createdAt: new Date(0),
      expiresAt: new Date(ports.clock.now() + 60_000),
      endedAt: null,
    });
    const removed = await deleteUser(ports, 'dee');
    expect(removed).toMatchObject({ revokedGrants: 0, endedSessions: 1, unlinkedIdentities: 0 });
    expect((await ports.storage.sessions.findById('s1'))?.endedAt).not.toBeNull();
    expect(await ports.storage.users.findByUsername('dee')).toBeUndefined();
    expect(((await rejection(deleteUser(ports, 'dee'))) as AdminError).code).toBe('not_found');
  });
});

describe('groups over the admin use cases', () => {
  it('counts members, pages groups and members, and changes memberships idempotently', async () => {
    const ports = adminPorts();
    await createUser(ports, user('ann', ['dev', 'ops']));
    await createUser(ports, user('bob', ['dev']));
    const counts = (page: { items: Array<{ name: string; members: number }> }) =>
      page.items.map((g) => [g.name, g.members]);
    expect(counts(await listGroups(ports, PageQuery.parse({})))).toEqual([
      ['dev', 2],
      ['ops', 1],
    ]);
    const first = await listGroups(ports, PageQuery.parse({ limit: '1' }));
    expect(counts(await listGroups(ports, PageQuery.parse({ cursor: first.nextCursor as string })))).toEqual([
      ['ops', 1],
    ]);
    expect((await listGroupMembers(ports, 'dev', PageQuery.parse({}))).items.map((u) => u.username)).toEqual([
      'ann',
      'bob',
    ]);
    expect(
      ((await rejection(listGroupMembers(ports, 'none', PageQuery.parse({})))) as AdminError).problemCode,
    ).toBe('group_not_found');
    expect(((await rejection(addGroupMember(ports, 'a b', 'ann'))) as AdminError).problemCode).toBe(
      'invalid_group',
    );

    expect((await addGroupMember(ports, 'ops', 'bob')).changed).toBe(true);
    expect((await addGroupMember(ports, 'ops', 'bob')).changed).toBe(false);
    expect((await removeGroupMember(ports, 'dev', 'ann')).user.groups).toEqual(['ops']);
    expect((await removeGroupMember(ports, 'dev', 'ann')).changed).toBe(false);
    await removeGroupMember(ports, 'dev', 'bob');
    // An empty group stays until deleted.
    expect((await removeGroupMember(ports, 'dev', 'bob')).changed).toBe(false);
    expect(((await rejection(removeGroupMember(ports, 'none', 'bob'))) as AdminError).problemCode).toBe(
      'group_not_found',
    );
  });
});
