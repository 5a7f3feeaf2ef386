import {
  addGroupMember,
  listGroupMembers,
  listGroups,
  parseAdminInput,
  removeGroupMember,
  userView,
} from '@idgate/core/admin';
import { PageQuery } from '@idgate/schema';
import type { Command } from 'commander';
import { type CliContext, definedOnly, table } from './context.js';
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

/**
 * `idgate groups list | members | add | remove`: groups are the union of users' groups, so a
 * group exists while someone is in it.
 */
export function registerGroups(program: Command, ctx: CliContext): void {
  const groups = program
    .command('groups')
    .description("list groups and change their members (users' groups)");
  const paging = (command: Command) =>
    command
      .option('--limit <n>', 'how many to show (1 to 500, default 100)')
      .option('--cursor <cursor>', 'the page after the one that printed this cursor')
      .option('--json', 'print a JSON array (the next cursor, if any, goes to stderr)');

  paging(groups.command('list').description('list groups with how many users are in each')).action(
    async (options: PageFlags, command: Command) => {
      const query = pageQuery(options, 'group');
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const page = await listGroups(admin, query);
        if (options.json) ctx.json(page.items);
        else if (page.items.length === 0) ctx.out('no groups');
        else
          ctx.out(
            table(
              ['GROUP', 'MEMBERS'],
              page.items.map((g) => [g.name, String(g.members)]),
            ),
          );
        if (page.nextCursor !== null) ctx.note(`more groups: --cursor ${page.nextCursor}`);
      });
    },
  );

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
