import { randomUUID } from 'node:crypto';
import { type Storage, StorageConflictError, type UserRecord } from '@idgate/core';
import { GroupName, Username } from '@idgate/schema';
import type { Command } from 'commander';
import { z } from 'zod';
import {
  type CliContext,
  CliError,
  collect,
  distinct,
  parseField,
  readSecretFromStdin,
  table,
  when,
} from './context.js';
import { generatePassword } from './generate.js';
import { registerUserIdentities } from './user-identities.js';
import { loginAttemptView, userView } from './views.js';

const Email = z.email({ error: 'must be an email address' });
const DisplayName = z.string().trim().min(1, 'must not be empty').max(256, 'must be at most 256 characters');
const DEFAULT_LOGINS_LIMIT = 20;
const MAX_LOGINS_LIMIT = 1000;

interface PasswordOptions {
  passwordStdin?: boolean;
  json?: boolean;
}

export function registerUsers(program: Command, ctx: CliContext): void {
  const users = program.command('users').description('manage local users');

  /** The password from stdin, or a generated one (then `generated` is true and it is shown once). */
  const newPassword = async (options: PasswordOptions) =>
    options.passwordStdin
      ? { password: await readSecretFromStdin(ctx.io.stdin, 'password'), generated: false }
      : { password: generatePassword(), generated: true };

  const findUser = async (storage: Storage, username: string): Promise<UserRecord> => {
    const user = await storage.users.findByUsername(username);
    if (user === undefined) throw new CliError(`no user ${username}`);
    return user;
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
        rawUsername: string,
        options: PasswordOptions & { email?: string; name?: string; group?: string[] },
        command: Command,
      ) => {
        const username = parseField(Username, rawUsername, 'username');
        const email = options.email === undefined ? null : parseField(Email, options.email, '--email');
        const displayName =
          options.name === undefined ? null : parseField(DisplayName, options.name, '--name');
        const groups = distinct(
          (options.group ?? []).map((group) => parseField(GroupName, group, '--group')),
        );
        const { password, generated } = await newPassword(options);
        await ctx.withServices(ctx.config(command), async ({ storage, hasher, clock }) => {
          const passwordHash = await hasher.hash(password);
          let user: UserRecord;
          try {
            user = await storage.users.create({
              id: randomUUID(),
              username,
              email,
              displayName,
              groups,
              passwordHash,
              createdAt: new Date(clock.now()),
            });
          } catch (error) {
            if (error instanceof StorageConflictError && error.field === 'username') {
              throw new CliError(`user ${username} already exists`);
            }
            throw error;
          }
          if (options.json) {
            ctx.json(generated ? { ...userView(user), password } : userView(user));
            return;
          }
          ctx.out(`created user ${user.username} (id ${user.id})`);
          if (generated) ctx.out(`password: ${password}  (shown only once)`);
        });
      },
    );

  users
    .command('list')
    .description('list users')
    .option('--json', 'print a JSON array')
    .action(async (options: { json?: boolean }, command: Command) => {
      await ctx.withServices(ctx.config(command), async ({ storage }) => {
        const all = await storage.users.list();
        if (options.json) {
          ctx.json(all.map(userView));
          return;
        }
        if (all.length === 0) {
          ctx.out('no users');
          return;
        }
        ctx.out(
          table(
            ['USERNAME', 'STATUS', 'EMAIL', 'NAME', 'GROUPS', 'CREATED'],
            all.map((u) => [
              u.username,
              u.disabled ? 'disabled' : 'enabled',
              u.email ?? '-',
              u.displayName ?? '-',
              u.groups.join(',') || '-',
              when(u.createdAt),
            ]),
          ),
        );
      });
    });

  for (const [name, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    users
      .command(name)
      .description(disabled ? 'stop a user from signing in' : 'allow a disabled user to sign in again')
      .argument('<username>')
      .action(async (username: string, _options: unknown, command: Command) => {
        await ctx.withServices(ctx.config(command), async ({ storage, clock }) => {
          const user = await findUser(storage, username);
          if (user.disabled === disabled) {
            ctx.out(`user ${user.username} is already ${name}d`);
            return;
          }
          await storage.users.update(user.id, { disabled, updatedAt: new Date(clock.now()) });
          ctx.out(`user ${user.username} ${name}d`);
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
      `how many attempts to show (default ${DEFAULT_LOGINS_LIMIT}, at most ${MAX_LOGINS_LIMIT})`,
    )
    .option('--json', 'print a JSON array')
    .action(async (username: string, options: { limit?: string; json?: boolean }, command: Command) => {
      const limit = parseLimit(options.limit);
      await ctx.withServices(ctx.config(command), async ({ storage }) => {
        const attempts = await storage.loginAttempts.listByUsername(username.toLowerCase(), limit);
        // Only when there is nothing to show does a missing account matter.
        if (attempts.length === 0 && (await storage.users.findByUsername(username)) === undefined) {
          throw new CliError(`no user ${username}`);
        }
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
      const { password, generated } = await newPassword(options);
      await ctx.withServices(ctx.config(command), async ({ storage, hasher, clock }) => {
        const user = await findUser(storage, username);
        const passwordHash = await hasher.hash(password);
        const updated = await storage.users.update(user.id, {
          passwordHash,
          updatedAt: new Date(clock.now()),
        });
        if (updated === undefined) throw new CliError(`no user ${username}`);
        if (options.json) {
          ctx.json(generated ? { ...userView(updated), password } : userView(updated));
          return;
        }
        ctx.out(`password of ${updated.username} changed`);
        if (generated) ctx.out(`password: ${password}  (shown only once)`);
      });
    });

  registerUserIdentities(users, ctx);
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LOGINS_LIMIT;
  const limit = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(limit) || limit <= 0 || limit > MAX_LOGINS_LIMIT) {
    throw new CliError(
      `--limit ${JSON.stringify(raw)}: must be a whole number from 1 to ${MAX_LOGINS_LIMIT}`,
    );
  }
  return limit;
}
