import {
  addGroupMember,
  createGroup,
  deleteGroup,
  getGroup,
  listGroupMembers,
  listGroups,
  parseAdminInput,
  removeGroupMember,
  updateGroup,
  userView,
} from '@idgate/core/admin';
import { type Group, PageQuery } from '@idgate/schema';
import type { Command } from 'commander';
import { type CliContext, CliError, definedOnly, optionLabels, table } from './context.js';
import { userTable } from './users.js';

interface PageFlags {
  limit?: string;
  cursor?: string;
  json?: boolean;
}

/** `--limit` and `--cursor` as a page query. */
const pageQuery = (options: PageFlags, object: 'group' | 'user') =>
  parseAdminInput(PageQuery, definedOnly({ limit: options.limit, cursor: options.cursor }), object, {
    label: (path) => `--${path}`,
  });

const GROUP_OPTIONS = optionLabels({
  name: 'NAME',
  description: '--description',
  requireMfa: '--require-mfa',
});
const RENAME_OPTIONS = optionLabels({ name: 'NEW' });

/** A group's description as given on the command line: `''` removes it. */
const descriptionOf = (description: string | undefined) =>
  description === undefined ? {} : { description: description === '' ? null : description };

/**
 * `idgate groups list | describe | create | rename | update | delete | members | add | remove`:
 * groups are objects of their own (name, description); their members are users whose groups name
 * them. Adding a member to a group that does not exist creates it.
 */
export function registerGroups(program: Command, ctx: CliContext): void {
  const groups = program.command('groups').description('manage groups and their members');
  const printGroup = (group: Group, options: { json?: boolean }, done?: string) => {
    if (options.json) return ctx.json(group);
    if (done !== undefined) ctx.out(done);
    ctx.out(`name: ${group.name}`);
    ctx.out(`description: ${group.description ?? '-'}`);
    ctx.out(`require MFA: ${group.requireMfa ? 'yes' : 'no'}`);
    ctx.out(`members: ${group.members}`);
    ctx.out(`created: ${group.createdAt}`);
    ctx.out(`updated: ${group.updatedAt}`);
  };

  groups
    .command('create')
    .description('create a group, with no member yet')
    .argument('<name>')
    .option('--description <text>', 'what the group is for')
    .option('--require-mfa', 'its members sign in with a second factor (enrolling one if they have none)')
    .option('--json', 'print the group as JSON')
    .action(
      async (
        name: string,
        options: { description?: string; requireMfa?: boolean; json?: boolean },
        command: Command,
      ) => {
        await ctx.withAdmin(ctx.config(command), async (admin) => {
          const input = {
            name,
            ...descriptionOf(options.description),
            ...(options.requireMfa === true ? { requireMfa: true } : {}),
          };
          const group = await createGroup(admin, input, { label: GROUP_OPTIONS });
          printGroup(group, options, `created group ${group.name}`);
        });
      },
    );

  groups
    .command('describe')
    .description('show a group: its description and how many users are in it')
    .argument('<name>')
    .option('--json', 'print the group as JSON')
    .action(async (name: string, options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) =>
        printGroup(await getGroup(admin, name), options),
      );
    });

  groups
    .command('rename')
    .description("rename a group, on every member too (their tokens' groups follow at once)")
    .argument('<old>')
    .argument('<new>')
    .option('--json', 'print the group as JSON')
    .action(async (old: string, name: string, options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const group = await updateGroup(admin, old, { name }, { label: RENAME_OPTIONS });
        printGroup(group, options, `renamed group ${old} to ${group.name} (${group.members} member(s))`);
      });
    });

  groups
    .command('update')
    .description("change a group's description, or whether its members need a second factor")
    .argument('<name>')
    .option('--description <text>', "the new description ('' removes it)")
    .option('--require-mfa', 'its members sign in with a second factor (enrolling one if they have none)')
    .option('--no-require-mfa', 'its members no longer need a second factor for being in it')
    .option('--json', 'print the group as JSON')
    .action(
      async (
        name: string,
        options: { description?: string; requireMfa?: boolean; json?: boolean },
        command: Command,
      ) => {
        if (options.description === undefined && options.requireMfa === undefined)
          throw new CliError('nothing to change: give --description, --require-mfa or --no-require-mfa');
        await ctx.withAdmin(ctx.config(command), async (admin) => {
          const input = {
            ...descriptionOf(options.description),
            ...(options.requireMfa === undefined ? {} : { requireMfa: options.requireMfa }),
          };
          const group = await updateGroup(admin, name, input, { label: GROUP_OPTIONS });
          printGroup(group, options, `updated group ${group.name}`);
        });
      },
    );

  groups
    .command('delete')
    .description('delete a group; one with members only with --force, which takes them out of it')
    .argument('<name>')
    .option('--force', 'delete it even with members, taking every member out of it')
    .option('--json', 'print what was deleted as JSON')
    .action(async (name: string, options: { force?: boolean; json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const deleted = await deleteGroup(admin, name, { force: options.force === true });
        if (options.json) ctx.json(deleted);
        else ctx.out(`group ${deleted.name} deleted (${deleted.removedMembers} member(s) taken out)`);
      });
    });
  const paging = (command: Command) =>
    command
      .option('--limit <n>', 'how many to show (1 to 500, default 100)')
      .option('--cursor <cursor>', 'the page after the one that printed this cursor')
      .option('--json', 'print a JSON array (the next cursor, if any, goes to stderr)');

  paging(
    groups.command('list').description('list groups (empty ones too) with how many users are in each'),
  ).action(async (options: PageFlags, command: Command) => {
    const query = pageQuery(options, 'group');
    await ctx.withAdmin(ctx.config(command), async (admin) => {
      const page = await listGroups(admin, query);
      if (options.json) ctx.json(page.items);
      else if (page.items.length === 0) ctx.out('no groups');
      else
        ctx.out(
          table(
            ['GROUP', 'MEMBERS', 'DESCRIPTION'],
            page.items.map((g) => [g.name, String(g.members), g.description ?? '-']),
          ),
        );
      if (page.nextCursor !== null) ctx.note(`more groups: --cursor ${page.nextCursor}`);
    });
  });

  paging(groups.command('members').description('list the users in a group').argument('<group>')).action(
    async (group: string, options: PageFlags, command: Command) => {
      const query = pageQuery(options, 'user');
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const page = await listGroupMembers(admin, group, query);
        if (options.json) ctx.json(page.items.map(userView));
        else ctx.out(userTable(page.items));
        if (page.nextCursor !== null) ctx.note(`more members: --cursor ${page.nextCursor}`);
      });
    },
  );

  for (const [verb, description] of [
    ['add', 'put a user in a group (nothing changes if it is in it already)'],
    ['remove', 'take a user out of a group'],
  ] as const) {
    groups
      .command(verb)
      .description(description)
      .argument('<group>')
      .argument('<username>')
      .option('--json', 'print the user as JSON')
      .action(async (group: string, username: string, options: { json?: boolean }, command: Command) => {
        await ctx.withAdmin(ctx.config(command), async (admin) => {
          const change = verb === 'add' ? addGroupMember : removeGroupMember;
          const { user, changed } = await change(admin, group, username);
          if (options.json) ctx.json(userView(user));
          else if (!changed)
            ctx.out(`user ${user.username} is ${verb === 'add' ? 'already' : 'not'} in ${group}`);
          else
            ctx.out(
              verb === 'add'
                ? `added ${user.username} to ${group}`
                : `removed ${user.username} from ${group}`,
            );
        });
      });
  }
}
