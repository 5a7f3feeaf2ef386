import type { UserRecord } from '@idgate/core';
import {
  createUser,
  LOGIN_ATTEMPTS_LIMIT,
  listLoginAttempts,
  listUserPage,
  loginAttemptView,
  parseAdminInput,
  setUserDisabled,
  setUserPassword,
  userView,
} from '@idgate/core/admin';
import { CreateUserInput, UserListQuery } from '@idgate/schema';
import type { Command } from 'commander';
import {
  type CliContext,
  CliError,
  collect,
  definedOnly,
  optionLabels,
  readSecretFromStdin,
  table,
  when,
} from './context.js';
import { registerUserFactors } from './user-factors.js';
import { registerUserIdentities } from './user-identities.js';
import { registerUserChanges } from './users-manage.js';

const USER_OPTIONS = optionLabels({ email: '--email', displayName: '--name', groups: '--group' });

interface PasswordOptions {
  passwordStdin?: boolean;
  json?: boolean;
}

export function registerUsers(program: Command, ctx: CliContext): void {
  const users = program.command('users').description('manage local users');

  /** The password read from stdin, or undefined: the use case then generates one, shown once. */
  const givenPassword = async (options: PasswordOptions) =>
    options.passwordStdin ? await readSecretFromStdin(ctx.io.stdin, 'password') : undefined;

  /** The user as `--json` prints it, with the password when it was generated. */
  const printUser = (
    options: PasswordOptions,
    result: { user: Parameters<typeof userView>[0]; generatedPassword: string | undefined },
    line: string,
  ) => {
    const { user, generatedPassword } = result;
    if (options.json) {
      ctx.json(
        generatedPassword === undefined ? userView(user) : { ...userView(user), password: generatedPassword },
      );
      return;
    }
    ctx.out(line);
    if (generatedPassword !== undefined) ctx.out(`password: ${generatedPassword}  (shown only once)`);
  };

  users
    .command('add')
    .description('create a user')
    .argument('<username>', 'letters, digits and . _ @ -; unique regardless of case')
    .option('--email <email>', 'email address')
    .option('--name <name>', 'display name')
    .option('--group <group>', 'a group the user belongs to (repeatable)', collect)
    .option('--password-stdin', 'read the password from stdin instead of generating one')
    .option('--json', 'print the user as JSON')
    .action(
      async (
        username: string,
        options: PasswordOptions & { email?: string; name?: string; group?: string[] },
        command: Command,
      ) => {
        const fields = { username, email: options.email, displayName: options.name, groups: options.group };
        const input = parseAdminInput(CreateUserInput, fields, 'user', { label: USER_OPTIONS });
        const password = await givenPassword(options);
        await ctx.withAdmin(ctx.config(command), async (admin) => {
          const created = await createUser(admin, input, password);
          printUser(options, created, `created user ${created.user.username} (id ${created.user.id})`);
        });
      },
    );

  users
    .command('list')
    .description('list users by username, a page at a time')
    .option('--group <group>', 'only members of this group')
    .option('--status <status>', 'only active, disabled or locked users')
    .option('--q <text>', 'only users with this text in their username, email or display name')
    .option('--limit <n>', 'how many users to show (1 to 500, default 100)')
    .option('--cursor <cursor>', 'the page after the one that printed this cursor')
    .option('--json', 'print a JSON array (the next cursor, if any, goes to stderr)')
    .action(async (options: UserListFlags, command: Command) => {
      const query = parseAdminInput(
        UserListQuery,
        definedOnly({
          group: options.group,
          status: options.status,
          q: options.q,
          limit: options.limit,
          cursor: options.cursor,
        }),
        'user',
        { label: (path) => `--${path}` },
      );
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const page = await listUserPage(admin, query);
        if (options.json) ctx.json(page.items.map(userView));
        else if (page.items.length === 0) ctx.out('no users');
        else ctx.out(userTable(page.items));
        if (page.nextCursor !== null) ctx.note(`more users: --cursor ${page.nextCursor}`);
      });
    });

  for (const [name, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    users
      .command(name)
      .description(
        disabled
          ? 'stop a user from signing in, and end its browser sessions and grants'
          : 'allow a disabled user to sign in again (its ended sessions and grants stay ended)',
      )
      .argument('<username>')
      .action(async (username: string, _options: unknown, command: Command) => {
        await ctx.withAdmin(ctx.config(command), async (admin) => {
          const { user, changed, endedSessions, revokedGrants } = await setUserDisabled(
            admin,
            username,
            disabled,
          );
          if (!changed) ctx.out(`user ${user.username} is already ${name}d`);
          else if (endedSessions + revokedGrants === 0) ctx.out(`user ${user.username} ${name}d`);
          else
            ctx.out(
              `user ${user.username} ${name}d; ${count(endedSessions, 'session')} ended, ${count(revokedGrants, 'grant')} revoked`,
            );
        });
      });
  }

  users
    .command('logins')
    .description(
      'list recent sign-in attempts for a username, newest first; attempts are kept by the lower-cased ' +
        'username as typed, so they are listed whether or not such a user exists (someone guessing names)',
    )
    .argument('<username>')
    .option(
      '--limit <n>',
      `how many attempts to show (default ${LOGIN_ATTEMPTS_LIMIT.default}, at most ${LOGIN_ATTEMPTS_LIMIT.max})`,
    )
    .option('--json', 'print a JSON array')
    .action(async (username: string, options: { limit?: string; json?: boolean }, command: Command) => {
      const limit = parseLimit(options.limit);
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const attempts = await listLoginAttempts(admin, username, limit);
        if (options.json) {
          ctx.json(attempts.map(loginAttemptView));
          return;
        }
        if (attempts.length === 0) {
          ctx.out(`no login attempts for ${username}`);
          return;
        }
        ctx.out(
          table(
            ['TIME', 'RESULT', 'REASON', 'SOURCE', 'PROVIDER'],
            attempts.map((a) => [
              when(a.createdAt),
              a.success ? 'success' : 'failure',
              a.reason ?? '-',
              a.sourceAddress,
              a.provider,
            ]),
          ),
        );
      });
    });

  users
    .command('set-password')
    .description("replace a user's password")
    .argument('<username>')
    .option('--password-stdin', 'read the password from stdin instead of generating one')
    .option('--json', 'print the user as JSON')
    .action(async (username: string, options: PasswordOptions, command: Command) => {
      const password = await givenPassword(options);
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const changed = await setUserPassword(admin, username, password);
        printUser(options, changed, `password of ${changed.user.username} changed`);
      });
    });

  registerUserIdentities(users, ctx);
  registerUserFactors(users, ctx);
  registerUserChanges(users, ctx);
}

interface UserListFlags {
  group?: string;
  status?: string;
  q?: string;
  limit?: string;
  cursor?: string;
  json?: boolean;
}

/** Users as `idgate users list` and `groups members` print them. */
export function userTable(users: readonly UserRecord[]): string {
  return table(
    ['USERNAME', 'STATUS', 'EMAIL', 'NAME', 'GROUPS', 'CREATED'],
    users.map((u) => [
      u.username,
      u.disabled ? 'disabled' : 'enabled',
      u.email ?? '-',
      u.displayName ?? '-',
      u.groups.join(',') || '-',
      when(u.createdAt),
    ]),
  );
}

/** `--limit` as a number; the text must be digits, the number within the use case's range. */
function parseLimit(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const limit = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(limit) || limit <= 0 || limit > LOGIN_ATTEMPTS_LIMIT.max) {
    throw new CliError(
      `--limit ${JSON.stringify(raw)}: must be a whole number from 1 to ${LOGIN_ATTEMPTS_LIMIT.max}`,
    );
  }
  return limit;
}

/** `1 session`, `2 sessions`. */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
