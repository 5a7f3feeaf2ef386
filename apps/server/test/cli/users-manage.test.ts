import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type TestDatabase, testDatabaseUrls } from '../helpers/databases.js';
import { assertBuilt, envFor, lines, openTestServices, runInProcess } from './support.js';

beforeAll(assertBuilt);

describe.each(testDatabaseUrls())(
  'idgate users show, update, delete, unlock and list filters on $name',
  ({ create }) => {
    let database: TestDatabase;
    let env: Record<string, string>;
    const cli = (args: string[], input?: string) =>
      runInProcess(args, input === undefined ? { env } : { env, input });
    beforeEach(async () => {
      database = await create();
      env = envFor(database.url, { IDGATE_LOGIN_MAX_FAILURES: '2' });
      expect((await cli(['migrate'])).code).toBe(0);
    });
    afterEach(async () => {
      await database.drop();
    });

    it('shows and updates a user, honouring --if-match, and refuses bad input in one line', async () => {
      expect((await cli(['users', 'add', 'alice', '--group', 'dev'])).code).toBe(0);
      const shown = JSON.parse((await cli(['users', 'show', 'ALICE', '--json'])).stdout) as { etag: string };
      const text = await cli(['users', 'show', 'alice']);
      expect(lines(text.stdout)).toContain(`etag:     ${shown.etag}`);

      const updated = await cli([
        'users',
        'update',
        'alice',
        '--email',
        'alice@example.com',
        '--display-name',
        'Alice L',
        '--add-group',
        'ops',
        '--disable',
        '--if-match',
        shown.etag,
        '--json',
      ]);
      expect(updated.code).toBe(0);
      expect(JSON.parse(updated.stdout)).toMatchObject({
        email: 'alice@example.com',
        displayName: 'Alice L',
        groups: ['dev', 'ops'],
        disabled: true,
      });
      const stale = await cli(['users', 'update', 'alice', '--enable', '--if-match', shown.etag]);
      expect(stale.code).toBe(1);
      expect(stale.stderr).toMatch(/^idgate: user alice has changed since it was read/);

      const replaced = await cli([
        'users',
        'update',
        'alice',
        '--groups',
        'sre, qa',
        '--email',
        '',
        '--enable',
      ]);
      expect(replaced).toMatchObject({ code: 0, stdout: 'updated user alice\n', stderr: '' });
      expect(JSON.parse((await cli(['users', 'show', 'alice', '--json'])).stdout)).toMatchObject({
        groups: ['sre', 'qa'],
        email: null,
        disabled: false,
      });

      const cases: Array<[string[], string]> = [
        [['--email', 'nope'], 'idgate: --email "nope": must be an email address\n'],
        [
          ['--groups', 'system:masters'],
          'idgate: --groups.0 must not start with "system:", which Kubernetes reserves\n',
        ],
        [['--disable', '--enable'], 'idgate: --disable and --enable exclude each other\n'],
        [
          [],
          'idgate: nothing to change: give --email, --display-name, --groups, --add-group, --remove-group, --disable, --enable or --[no-]require-mfa\n',
        ],
      ];
      for (const [flags, stderr] of cases) {
        const result = await cli(['users', 'update', 'alice', ...flags]);
        expect(result, flags.join(' ')).toMatchObject({ code: 1, stdout: '' });
        expect(result.stderr.split('\n')).toHaveLength(2);
        if (!flags.includes('--groups')) expect(result.stderr).toBe(stderr);
      }
      expect(await cli(['users', 'show', 'nobody'])).toMatchObject({
        code: 1,
        stderr: 'idgate: no user nobody\n',
      });
    });

    it('refuses weak passwords from stdin, saying why, on add and set-password', async () => {
      const weak = await cli(['users', 'add', 'bob', '--password-stdin'], 'short\n');
      expect(weak).toMatchObject({
        code: 1,
        stdout: '',
        stderr: 'idgate: password must be at least 12 characters long\n',
      });
      const common = await cli(['users', 'add', 'bob', '--password-stdin'], 'Password123!\n');
      expect(common.stderr).toBe('idgate: password is one of the most common passwords\n');
      expect((await cli(['users', 'add', 'bob'])).code).toBe(0);
      const named = await cli(['users', 'set-password', 'bob', '--password-stdin'], 'bob-is-my-name-1\n');
      expect(named.stderr).toBe('idgate: password must not contain the username\n');
      const longer = { ...env, IDGATE_PASSWORD_MIN_LENGTH: '20' };
      const policy = await runInProcess(['users', 'set-password', 'bob', '--password-stdin'], {
        env: longer,
        input: 'sixteen chars ok\n',
      });
      expect(policy.stderr).toBe('idgate: password must be at least 20 characters long\n');
    });

    it('lists with filters and pages, and unlocks a locked user', async () => {
      for (const name of ['ann', 'ben', 'cat', 'dan'])
        expect((await cli(['users', 'add', name])).code).toBe(0);
      expect((await cli(['users', 'update', 'ben', '--groups', 'qa'])).code).toBe(0);
      expect((await cli(['users', 'disable', 'cat'])).code).toBe(0);

      const first = await cli(['users', 'list', '--limit', '2', '--json']);
      expect((JSON.parse(first.stdout) as Array<{ username: string }>).map((u) => u.username)).toEqual([
        'ann',
        'ben',
      ]);
      const cursor = /--cursor (\S+)/.exec(first.stderr)?.[1] as string;
      const second = await cli(['users', 'list', '--limit', '2', '--cursor', cursor, '--json']);
      expect((JSON.parse(second.stdout) as Array<{ username: string }>).map((u) => u.username)).toEqual([
        'cat',
        'dan',
      ]);
      expect(second.stderr).toBe('');
      const filtered = async (...flags: string[]) =>
        (
          JSON.parse((await cli(['users', 'list', ...flags, '--json'])).stdout) as Array<{ username: string }>
        ).map((u) => u.username);
      expect(await filtered('--group', 'qa')).toEqual(['ben']);
      expect(await filtered('--status', 'disabled')).toEqual(['cat']);
      expect(await filtered('--q', 'AN')).toEqual(['ann', 'dan']);
      expect((await cli(['users', 'list', '--limit', '0'])).stderr).toBe(
        'idgate: --limit "0": must be a whole number from 1 to 500\n',
      );
      expect((await cli(['users', 'list', '--status', 'gone'])).code).toBe(1);
      expect((await cli(['users', 'list', '--cursor', '!!'])).stderr).toBe(
        'idgate: cursor: must be the nextCursor of a previous page\n',
      );

      const services = await openTestServices(database.url);
      try {
        for (let i = 0; i < 2; i++)
          await services.storage.loginAttempts.record({
            id: `f${i}`,
            username: 'dan',
            userId: null,
            sourceAddress: '203.0.113.9',
            provider: 'password',
            success: false,
            reason: 'invalid_credentials',
            createdAt: new Date(Date.now() - 1000 + i),
          });
      } finally {
        await services.close();
      }
      expect(await filtered('--status', 'locked')).toEqual(['dan']);
      expect(await filtered('--status', 'active')).toEqual(['ann', 'ben']);
      expect(await cli(['users', 'unlock', 'dan'])).toMatchObject({ code: 0, stdout: 'unlocked user dan\n' });
      expect(await filtered('--status', 'locked')).toEqual([]);
      expect(await cli(['users', 'unlock', 'dan'])).toMatchObject({
        code: 0,
        stdout: 'user dan was not locked\n',
      });
    });

    it('deletes a user through the built binary', async () => {
      expect((await cli(['users', 'add', 'eve'])).code).toBe(0);
      const deleted = await runInProcess(['users', 'delete', 'eve', '--json'], { env });
      expect(deleted.code).toBe(0);
      expect(JSON.parse(deleted.stdout)).toEqual({
        username: 'eve',
        revokedGrants: 0,
        endedSessions: 0,
        unlinkedIdentities: 0,
      });
      expect(await cli(['users', 'delete', 'eve'])).toMatchObject({
        code: 1,
        stderr: 'idgate: no user eve\n',
      });
    });
  },
);
