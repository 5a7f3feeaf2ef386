import type { UserRecord } from '@idgate/core';
import {
  addGroupMember,
  deleteUser,
  getUser,
  parseAdminInput,
  removeGroupMember,
  setMfaRequired,
  unlockUser,
  updateUser,
  userView,
} from '@idgate/core/admin';
import { UpdateUserInput } from '@idgate/schema';
import type { Command } from 'commander';
import { type CliContext, CliError, collect, definedOnly, optionLabels, when } from './context.js';

const UPDATE_OPTIONS = optionLabels({
  email: '--email',
  displayName: '--display-name',
  groups: '--groups',
  disabled: '--disable/--enable',
});

interface UpdateFlags {
  email?: string;
  displayName?: string;
  groups?: string;
  addGroup?: string[];
  removeGroup?: string[];
  disable?: boolean;
  enable?: boolean;
  /** `--require-mfa` true, `--no-require-mfa` false. */
  requireMfa?: boolean;
  ifMatch?: string;
  json?: boolean;
}

/** `users show`, `users update`, `users delete`, `users unlock`. */
export function registerUserChanges(users: Command, ctx: CliContext): void {
  const print = (user: UserRecord, json: boolean | undefined, line: string) => {
    if (json) ctx.json(userView(user));
    else ctx.out(line);
  };

  users
    .command('show')
    .description('show a user')
    .argument('<username>')
    .option('--json', 'print the user as JSON (with its etag, for --if-match)')
    .action(async (username: string, options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const user = await getUser(admin, username);
        if (options.json) {
          ctx.json(userView(user));
          return;
        }
        const rows: Array<[string, string]> = [
          ['username', user.username],
          ['id', user.id],
          ['status', user.disabled ? 'disabled' : 'enabled'],
          ['email', user.email ?? '-'],
          ['name', user.displayName ?? '-'],
          ['groups', user.groups.join(',') || '-'],
          ['created', when(user.createdAt)],
          ['updated', when(user.updatedAt)],
          ['etag', userView(user).etag],
        ];
        for (const [key, value] of rows) ctx.out(`${`${key}:`.padEnd(10)}${value}`);
      });
    });

  users
    .command('update')
    .description("change a user's email, display name, groups or disabled state")
    .argument('<username>')
    .option('--email <email>', 'new email address ("" clears it)')
    .option('--display-name <name>', 'new display name ("" clears it)')
    .option('--groups <groups>', 'the groups, comma-separated, replacing the old ones ("" for none)')
    .option('--add-group <group>', 'put the user in a group (repeatable)', collect)
    .option('--remove-group <group>', 'take the user out of a group (repeatable)', collect)
    .option('--disable', 'stop the user from signing in')
    .option('--enable', 'let the user sign in again')
    .option('--require-mfa', 'require a second factor: the next sign-in asks for it, or enrols one first')
    .option('--no-require-mfa', 'stop requiring a second factor (factors enrolled stay)')
    .option('--if-match <etag>', 'change only if the user still has this etag (from show --json)')
    .option('--json', 'print the user as JSON')
    .action(async (username: string, options: UpdateFlags, command: Command) => {
      if (options.disable && options.enable) throw new CliError('--disable and --enable exclude each other');
      const memberships = (options.addGroup?.length ?? 0) + (options.removeGroup?.length ?? 0) > 0;
      if (options.groups !== undefined && memberships)
        throw new CliError('--groups replaces the groups: use it or --add-group/--remove-group, not both');
      const clear = (value: string | undefined) => (value === '' ? null : value);
      const patch = parseAdminInput(
        UpdateUserInput,
        definedOnly({
          email: clear(options.email),
          displayName: clear(options.displayName),
          groups:
            options.groups === undefined
              ? undefined
              : options.groups
                  .split(',')
                  .map((g) => g.trim())
                  .filter((g) => g !== ''),
          disabled: options.disable ? true : options.enable ? false : undefined,
        }),
        'user',
        { label: UPDATE_OPTIONS },
      );
      const changes = Object.keys(patch).length > 0;
      if (!changes && !memberships && options.requireMfa === undefined)
        throw new CliError(
          'nothing to change: give --email, --display-name, --groups, --add-group, --remove-group, --disable, --enable or --[no-]require-mfa',
        );
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        let user =
          changes || options.ifMatch !== undefined
            ? await updateUser(admin, username, patch, { ifMatch: options.ifMatch })
            : await getUser(admin, username);
        if (options.requireMfa !== undefined) await setMfaRequired(admin, user.username, options.requireMfa);
        for (const group of options.addGroup ?? [])
          user = (await addGroupMember(admin, group, user.username)).user;
        for (const group of options.removeGroup ?? [])
          user = (await removeGroupMember(admin, group, user.username)).user;
        print(user, options.json, `updated user ${user.username}`);
      });
    });

  users
    .command('delete')
    .description(
      'delete a user: its grants and tokens are revoked, its browser sessions end, its linked identities go',
    )
    .argument('<username>')
    .option('--if-match <etag>', 'delete only if the user still has this etag')
    .option('--json', 'print what was removed as JSON')
    .action(async (username: string, options: { ifMatch?: string; json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const { user, ...removed } = await deleteUser(admin, username, { ifMatch: options.ifMatch });
        if (options.json) {
          ctx.json({ username: user.username, ...removed });
          return;
        }
        ctx.out(
          `deleted user ${user.username} (${removed.revokedGrants} grants revoked, ` +
            `${removed.endedSessions} sessions ended, ${removed.unlinkedIdentities} identities unlinked)`,
        );
      });
    });

  users
    .command('unlock')
    .description('lift a lock set by failed sign-ins (blocks of source addresses stay)')
    .argument('<username>')
    .option('--json', 'print the user and whether it was locked as JSON')
    .action(async (username: string, options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const { user, wasLocked } = await unlockUser(admin, username, { by: 'cli' });
        if (options.json) {
          ctx.json({ ...userView(user), wasLocked });
          return;
        }
        ctx.out(wasLocked ? `unlocked user ${user.username}` : `user ${user.username} was not locked`);
      });
    });
}
