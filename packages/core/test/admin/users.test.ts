import { CreateUserInput } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import { AdminError, isAdminError, parseAdminInput } from '../../src/admin/errors.js';
import {
  createUser,
  LOGIN_ATTEMPTS_LIMIT,
  listLoginAttempts,
  listUsers,
  setUserDisabled,
  setUserPassword,
} from '../../src/admin/users.js';
import { userView } from '../../src/admin/views.js';
import { adminPorts, rejection, thrown } from './ports.js';

const alice = CreateUserInput.parse({ username: 'Alice', email: 'alice@example.test', groups: ['dev'] });

describe('creating a user', () => {
  it('stores the given password only as the hasher hashed it, at the clock time', async () => {
    const ports = adminPorts();
    const { user, generatedPassword } = await createUser(ports, alice, 'correct horse');
    expect(generatedPassword).toBeUndefined();
    expect(userView(user)).toMatchObject({
      username: 'Alice',
      email: 'alice@example.test',
      groups: ['dev'],
      disabled: false,
      createdAt: '2026-11-21T10:00:00.000Z',
    });
    expect(user.passwordHash).not.toContain('correct horse');
    expect(await ports.hasher.verify(user.passwordHash ?? '', 'correct horse')).toBe(true);
  });

  it('generates a password when none is given, and returns it to be shown once', async () => {
    const ports = adminPorts();
    const { user, generatedPassword } = await createUser(ports, alice);
    expect(generatedPassword).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(await ports.hasher.verify(user.passwordHash ?? '', generatedPassword ?? '')).toBe(true);
  });

  it('refuses a username that exists in another case, naming it as given', async () => {
    const ports = adminPorts();
    await createUser(ports, alice);
    const error = await rejection(createUser(ports, { ...alice, username: 'ALICE' }));
    expect(error).toBeInstanceOf(AdminError);
    expect(error).toMatchObject({ code: 'conflict', object: 'user', message: 'user ALICE already exists' });
    expect(await listUsers(ports)).toHaveLength(1);
  });

  it('takes its input through the schema, naming the first bad field as the caller labels it', () => {
    const labels: Record<string, string> = { email: '--email', groups: '--group' };
    const error = thrown(() =>
      parseAdminInput(CreateUserInput, { username: 'eve', groups: ['ok', 'system:masters'] }, 'user', {
        label: (path) => labels[path] ?? path,
      }),
    );
    expect(isAdminError(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'invalid_input',
      message: '--group "system:masters": must not start with "system:", which Kubernetes reserves',
    });
  });
});

describe('listing users', () => {
  it('orders them by username regardless of case', async () => {
    const ports = adminPorts();
    for (const username of ['zed', 'Amy', 'bob']) await createUser(ports, { ...alice, username });
    expect((await listUsers(ports)).map((u) => u.username)).toEqual(['Amy', 'bob', 'zed']);
  });
});

describe('disabling and enabling a user', () => {
  it('changes the user once, with the clock time, and says when it was so already', async () => {
    const ports = adminPorts();
    await createUser(ports, alice);
    ports.clock.advance(60);
    const disabled = await setUserDisabled(ports, 'alice', true);
    expect([disabled.changed, disabled.user.disabled]).toEqual([true, true]);
    expect(disabled.user.updatedAt.toISOString()).toBe('2026-11-21T10:01:00.000Z');
    expect((await setUserDisabled(ports, 'ALICE', true)).changed).toBe(false);
    expect((await setUserDisabled(ports, 'alice', false)).user.disabled).toBe(false);
  });

  it('refuses an unknown user', async () => {
    const error = await rejection(setUserDisabled(adminPorts(), 'nobody', true));
    expect(error).toMatchObject({
      code: 'not_found',
      object: 'user',
      key: 'nobody',
      message: 'no user nobody',
    });
  });
});

describe("setting a user's password", () => {
  it('replaces the hash, with the given password or a generated one', async () => {
    const ports = adminPorts();
    await createUser(ports, alice, 'old password');
    const given = await setUserPassword(ports, 'alice', 'new password');
    expect(given.generatedPassword).toBeUndefined();
    expect(await ports.hasher.verify(given.user.passwordHash ?? '', 'new password')).toBe(true);
    const generated = await setUserPassword(ports, 'alice');
    expect(
      await ports.hasher.verify(generated.user.passwordHash ?? '', generated.generatedPassword ?? ''),
    ).toBe(true);
    expect(await ports.hasher.verify(generated.user.passwordHash ?? '', 'new password')).toBe(false);
  });

  it('refuses an unknown user', async () => {
    expect(await rejection(setUserPassword(adminPorts(), 'nobody', 'x'))).toMatchObject({
      code: 'not_found',
    });
  });
});

describe('listing sign-in attempts', () => {
  const attempt = (id: string, username: string, minute: number) => ({
    id,
    username,
    userId: null,
    sourceAddress: '203.0.113.7',
    provider: 'password',
    success: false,
    reason: 'invalid_credentials',
    createdAt: new Date(Date.UTC(2026, 10, 21, 10, minute)),
  });

  it('lists them newest first by the lower-cased username, even for a username nobody has', async () => {
    const ports = adminPorts();
    await createUser(ports, alice);
    for (const [id, minute] of [
      ['a-1', 1],
      ['a-2', 2],
      ['a-3', 3],
    ] as const)
      await ports.storage.loginAttempts.record(attempt(id, 'alice', minute));
    await ports.storage.loginAttempts.record(attempt('g-1', 'guess', 4));
    expect((await listLoginAttempts(ports, 'ALICE', 2)).map((a) => a.id)).toEqual(['a-3', 'a-2']);
    expect((await listLoginAttempts(ports, 'guess')).map((a) => a.id)).toEqual(['g-1']);
    expect(await listLoginAttempts(ports, 'alice', LOGIN_ATTEMPTS_LIMIT.max)).toHaveLength(3);
  });

  it('refuses a username without attempts and without a user, and a limit out of range', async () => {
    const ports = adminPorts();
    expect(await rejection(listLoginAttempts(ports, 'nobody'))).toMatchObject({
      code: 'not_found',
      message: 'no user nobody',
    });
    await createUser(ports, alice);
    expect(await listLoginAttempts(ports, 'alice')).toEqual([]);
    for (const limit of [0, 1.5, LOGIN_ATTEMPTS_LIMIT.max + 1])
      expect(await rejection(listLoginAttempts(ports, 'alice', limit))).toMatchObject({
        code: 'invalid_input',
      });
  });
});
