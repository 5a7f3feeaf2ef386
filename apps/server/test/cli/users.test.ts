import type { LoginAttemptRecord } from '@idgate/core';
import { User } from '@idgate/schema';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { TestDatabase } from '../helpers/databases.js';
import { assertBuilt, cliDatabaseUrls, envFor, lines, openTestServices, runInProcess } from './support.js';

beforeAll(assertBuilt);

const USER_KEYS = Object.keys(User.shape).sort();

describe.each(cliDatabaseUrls())('idgate users on $name', ({ create }) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  beforeEach(async () => {
    database = await create();
    env = envFor(database.url);
    // Migrate first (in-process, for speed), so later runs print nothing on stderr unless they fail.
    expect((await runInProcess(['migrate'], { env })).code).toBe(0);
  });
  afterEach(async () => {
    await database.drop();
  });

  /** Whether `password` is the stored password of `username`. */
  async function passwordWorks(username: string, password: string): Promise<boolean> {
    const services = await openTestServices(database.url);
    try {
      const user = await services.storage.users.findByUsername(username);
      if (user?.passwordHash == null) throw new Error(`no password for ${username}`);
      return await services.hasher.verify(user.passwordHash, password);
    } finally {
      await services.close();
    }
  }

  it('adds a user with a generated password, shown once, as the User shape plus password', async () => {
    const args = ['users', 'add', 'Alice', '--email', 'alice@example.com', '--name', 'Alice L', '--json'];
    const result = await runInProcess([...args, '--group', 'devs', '--group', 'ops', '--group', 'devs'], {
      env,
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(Object.keys(printed).sort()).toEqual([...USER_KEYS, 'password'].sort());
    const { password, ...user } = printed;
    expect(User.parse(user)).toMatchObject({
      username: 'Alice',
      email: 'alice@example.com',
      displayName: 'Alice L',
      groups: ['devs', 'ops'],
      disabled: false,
    });
    expect(typeof password).toBe('string');
    expect((password as string).length).toBeGreaterThanOrEqual(20);
    expect(await passwordWorks('alice', password as string)).toBe(true);

    const list = await runInProcess(['users', 'list', '--json'], { env });
    expect(list.code).toBe(0);
    expect(list.stdout).not.toContain(password as string);
    expect(list.stdout).not.toContain('argon2');
  });

  it('reads the password from stdin, trimming one trailing newline, and does not print it', async () => {
    const result = await runInProcess(['users', 'add', 'bob', '--password-stdin'], {
      env,
      input: 'correct horse\n\n',
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^created user bob \(id [0-9a-f-]{36}\)\n$/);
    expect(await passwordWorks('bob', 'correct horse\n')).toBe(true);
    expect(await passwordWorks('bob', 'correct horse')).toBe(false);

    const json = await runInProcess(['users', 'add', 'carol', '--password-stdin', '--json'], {
      env,
      input: 'stapled-battery-horse\r\n',
    });
    expect(json.code).toBe(0);
    expect(Object.keys(JSON.parse(json.stdout) as object).sort()).toEqual(USER_KEYS);
    expect(json.stdout).not.toContain('stapled-battery-horse');
    expect(await passwordWorks('carol', 'stapled-battery-horse')).toBe(true);
  });

  it('refuses an empty password on stdin and creates nothing', async () => {
    const result = await runInProcess(['users', 'add', 'dave', '--password-stdin'], { env, input: '\n' });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('idgate: the password read from stdin is empty\n');
    const list = await runInProcess(['users', 'list', '--json'], { env });
    expect(JSON.parse(list.stdout)).toEqual([]);
  });

  it('refuses a username that exists in another case', async () => {
    expect((await runInProcess(['users', 'add', 'alice'], { env })).code).toBe(0);
    const result = await runInProcess(['users', 'add', 'ALICE', '--json'], { env });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('idgate: user ALICE already exists\n');
  });

  it('refuses an invalid username and a system: group, naming the field', async () => {
    const spaced = await runInProcess(['users', 'add', 'al ice'], { env });
    expect(spaced.code).toBe(1);
    expect(spaced.stdout).toBe('');
    expect(spaced.stderr).toBe(
      'idgate: username "al ice": may hold only letters, digits and . _ @ -, starting with a letter or digit\n',
    );
    const system = await runInProcess(['users', 'add', 'eve', '--group', 'system:masters'], { env });
    expect(system.code).toBe(1);
    expect(system.stdout).toBe('');
    expect(system.stderr).toBe(
      'idgate: --group "system:masters": must not start with "system:", which Kubernetes reserves\n',
    );
    const email = await runInProcess(['users', 'add', 'eve', '--email', 'not-an-email'], { env });
    expect(email.code).toBe(1);
    expect(email.stderr).toBe('idgate: --email "not-an-email": must be an email address\n');
    expect(JSON.parse((await runInProcess(['users', 'list', '--json'], { env })).stdout)).toEqual([]);
  });

  it('lists, disables, enables and sets passwords; unknown users fail with one line', async () => {
    expect((await runInProcess(['users', 'add', 'zed', '--group', 'g1'], { env })).code).toBe(0);
    expect((await runInProcess(['users', 'add', 'amy'], { env })).code).toBe(0);

    const listed = await runInProcess(['users', 'list', '--json'], { env });
    expect(listed.code).toBe(0);
    const users = JSON.parse(listed.stdout) as Record<string, unknown>[];
    expect(users.map((u) => u.username)).toEqual(['amy', 'zed']);
    for (const user of users) expect(Object.keys(user).sort()).toEqual(USER_KEYS);
    expect(z.array(User).parse(users)[1]).toMatchObject({ groups: ['g1'], disabled: false });

    const disabled = await runInProcess(['users', 'disable', 'ZED'], { env });
    expect(disabled).toMatchObject({ code: 0, stdout: 'user zed disabled\n', stderr: '' });
    const afterDisable = JSON.parse(
      (await runInProcess(['users', 'list', '--json'], { env })).stdout,
    ) as User[];
    expect(afterDisable.map((u) => [u.username, u.disabled])).toEqual([
      ['amy', false],
      ['zed', true],
    ]);
    const human = await runInProcess(['users', 'list'], { env });
    expect(human.stdout).toMatch(/^zed +disabled /m);
    expect(human.stdout).toMatch(/^amy +enabled /m);

    expect(await runInProcess(['users', 'enable', 'zed'], { env })).toMatchObject({
      code: 0,
      stdout: 'user zed enabled\n',
    });
    const afterEnable = JSON.parse(
      (await runInProcess(['users', 'list', '--json'], { env })).stdout,
    ) as User[];
    expect(afterEnable.map((u) => u.disabled)).toEqual([false, false]);

    const generated = await runInProcess(['users', 'set-password', 'amy', '--json'], { env });
    expect(generated.code).toBe(0);
    const { password } = JSON.parse(generated.stdout) as { password: string };
    expect(await passwordWorks('amy', password)).toBe(true);

    const fromStdin = await runInProcess(['users', 'set-password', 'amy', '--password-stdin'], {
      env,
      input: 'a new pass phrase\n',
    });
    expect(fromStdin).toMatchObject({ code: 0, stdout: 'password of amy changed\n', stderr: '' });
    expect(await passwordWorks('amy', 'a new pass phrase')).toBe(true);
    expect(await passwordWorks('amy', password)).toBe(false);

    for (const command of [['disable'], ['enable'], ['set-password']]) {
      const unknown = await runInProcess(['users', ...command, 'nobody'], { env });
      expect(unknown).toMatchObject({ code: 1, stdout: '', stderr: 'idgate: no user nobody\n' });
    }
    // Fourteen CLI processes in a row: past the default 30 s on a loaded two-core machine.
  }, 120_000);

  it('lists login attempts newest first, for known and unknown usernames alike', async () => {
    expect((await runInProcess(['users', 'add', 'alice'], { env })).code).toBe(0);
    const attempt = (id: string, iso: string, overrides: Partial<LoginAttemptRecord> = {}) => ({
      id,
      username: 'alice',
      userId: null,
      sourceAddress: '203.0.113.7',
      provider: 'password',
      success: false,
      reason: 'invalid_credentials',
      createdAt: new Date(iso),
      ...overrides,
    });
    const services = await openTestServices(database.url);
    try {
      const { loginAttempts } = services.storage;
      await loginAttempts.record(attempt('a-1', '2026-01-01T10:00:00.000Z'));
      await loginAttempts.record(
        attempt('a-2', '2026-01-01T10:01:00.000Z', { success: true, reason: null, provider: 'github' }),
      );
      await loginAttempts.record(
        attempt('a-3', '2026-01-01T10:02:00.000Z', { sourceAddress: '2001:db8::1' }),
      );
      await loginAttempts.record(attempt('m-1', '2026-01-01T09:00:00.000Z', { username: 'mallory' }));
    } finally {
      await services.close();
    }

    const human = await runInProcess(['users', 'logins', 'ALICE'], { env });
    expect(human).toMatchObject({ code: 0, stderr: '' });
    expect(lines(human.stdout)).toEqual([
      'TIME                      RESULT   REASON               SOURCE       PROVIDER',
      '2026-01-01T10:02:00.000Z  failure  invalid_credentials  2001:db8::1  password',
      '2026-01-01T10:01:00.000Z  success  -                    203.0.113.7  github',
      '2026-01-01T10:00:00.000Z  failure  invalid_credentials  203.0.113.7  password',
    ]);

    const json = await runInProcess(['users', 'logins', 'alice', '--limit', '2', '--json'], { env });
    expect(json).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(json.stdout)).toEqual([
      {
        id: 'a-3',
        username: 'alice',
        userId: null,
        sourceAddress: '2001:db8::1',
        provider: 'password',
        success: false,
        reason: 'invalid_credentials',
        createdAt: '2026-01-01T10:02:00.000Z',
      },
      {
        id: 'a-2',
        username: 'alice',
        userId: null,
        sourceAddress: '203.0.113.7',
        provider: 'github',
        success: true,
        reason: null,
        createdAt: '2026-01-01T10:01:00.000Z',
      },
    ]);

    // No account, but attempts: someone guessing names shows up.
    const guessed = await runInProcess(['users', 'logins', 'Mallory', '--json'], { env });
    expect(guessed.code).toBe(0);
    expect((JSON.parse(guessed.stdout) as { id: string }[]).map((a) => a.id)).toEqual(['m-1']);
  });

  it('says so when a user has no login attempts; an unknown user without any fails with one line', async () => {
    expect((await runInProcess(['users', 'add', 'bob'], { env })).code).toBe(0);
    expect(await runInProcess(['users', 'logins', 'bob'], { env })).toMatchObject({
      code: 0,
      stdout: 'no login attempts for bob\n',
      stderr: '',
    });
    expect(JSON.parse((await runInProcess(['users', 'logins', 'bob', '--json'], { env })).stdout)).toEqual(
      [],
    );
    expect(await runInProcess(['users', 'logins', 'nobody', '--json'], { env })).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'idgate: no user nobody\n',
    });
    for (const limit of ['0', '-1', '1.5', 'ten', '1001']) {
      expect(await runInProcess(['users', 'logins', 'bob', '--limit', limit], { env })).toEqual({
        code: 1,
        stdout: '',
        stderr: `idgate: --limit ${JSON.stringify(limit)}: must be a whole number from 1 to 1000\n`,
      });
    }
  });
});
