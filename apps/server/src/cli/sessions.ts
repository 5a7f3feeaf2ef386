import {
  type AdminPage,
  type AdminPorts,
  endAllUserSessions,
  endUserSession,
  listUserGrants,
  listUserSessions,
  revokeAllUserGrants,
  revokeUserGrant,
} from '@idgate/core/admin';
import type { Command } from 'commander';
import { type CliContext, CliError, table } from './context.js';

/** Every page of a listing, in order: the CLI shows a user's sessions or grants whole. */
export async function everyPage<T>(
  list: (query: { limit: string; cursor?: string }) => Promise<AdminPage<T>>,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const page: AdminPage<T> = await list(cursor === null ? { limit: '500' } : { limit: '500', cursor });
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return items;
}

/** `<id>` or `--all`, exactly one of them. */
function target(id: string | undefined, all: boolean | undefined, what: string): string | undefined {
  if (id !== undefined && all) throw new CliError(`give a ${what} id or --all, not both`);
  if (id === undefined && !all) throw new CliError(`give a ${what} id, or --all for every ${what}`);
  return id;
}

type Revoke = { all?: boolean; json?: boolean };

export function registerSessions(program: Command, ctx: CliContext): void {
  const sessions = program
    .command('sessions')
    .description("list and end a user's signed-in browsers (ending one revokes the grants made in it)");

  sessions
    .command('list')
    .description("list a user's live browser sessions, oldest first")
    .argument('<username>')
    .option('--json', 'print a JSON array')
    .action(async (username: string, options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const all = await everyPage((query) => listUserSessions(admin, username, query));
        if (options.json) {
          ctx.json(all);
          return;
        }
        if (all.length === 0) {
          ctx.out(`no sessions of ${username}`);
          return;
        }
        ctx.out(
          table(
            ['ID', 'CREATED', 'LAST_SEEN', 'EXPIRES', 'ADDRESS', 'CLIENTS', 'USER_AGENT'],
            all.map((s) => [
              s.id,
              s.createdAt,
              s.lastSeenAt,
              s.expiresAt,
              s.sourceAddress ?? '-',
              s.clients.map((c) => c.name ?? c.clientId).join(',') || '-',
              s.userAgent ?? '-',
            ]),
          ),
        );
      });
    });

  sessions
    .command('revoke')
    .description("end one of a user's sessions, or all of them with --all, revoking the grants made in them")
    .argument('<username>')
    .argument('[id]', 'the session id (see `idgate sessions list`)')
    .option('--all', 'end every session of the user')
    .option('--json', 'print what ended as JSON')
    .action(async (username: string, id: string | undefined, options: Revoke, command: Command) => {
      const one = target(id, options.all, 'session');
      await ctx.withAdmin(ctx.config(command), async (admin: AdminPorts) => {
        const result =
          one === undefined
            ? await endAllUserSessions(admin, username)
            : { ended: 1, ...(await endUserSession(admin, username, one)) };
        if (options.json) {
          ctx.json(result);
          return;
        }
        const grants = `${result.revokedGrants} grant${result.revokedGrants === 1 ? '' : 's'} revoked`;
        ctx.out(
          one === undefined
            ? `ended ${result.ended} session${result.ended === 1 ? '' : 's'} of ${username}; ${grants}`
            : `ended session ${one} of ${username}; ${grants}`,
        );
      });
    });

  const grants = program
    .command('grants')
    .description("list and revoke a user's grants to applications (refresh tokens, offline access)");

  grants
    .command('list')
    .description("list a user's live grants, oldest first")
    .argument('<username>')
    .option('--json', 'print a JSON array')
    .action(async (username: string, options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const all = await everyPage((query) => listUserGrants(admin, username, query));
        if (options.json) {
          ctx.json(all);
          return;
        }
        if (all.length === 0) {
          ctx.out(`no grants of ${username}`);
          return;
        }
        ctx.out(
          table(
            ['ID', 'CLIENT', 'NAME', 'SCOPES', 'RESOURCES', 'CREATED', 'LAST_USED', 'ADDRESS', 'EXPIRES'],
            all.map((g) => [
              g.id,
              g.clientId,
              g.clientName ?? '-',
              g.scopes.join(' ') || '-',
              g.resources?.join(' ') || '-',
              g.createdAt,
              g.lastUsedAt ?? '-',
              g.lastUsedAddress ?? '-',
              g.expiresAt,
            ]),
          ),
        );
      });
    });

  grants
    .command('revoke')
    .description(
      "revoke one of a user's grants, or all of them with --all: their tokens stop working at once",
    )
    .argument('<username>')
    .argument('[id]', 'the grant id (see `idgate grants list`)')
    .option('--all', 'revoke every grant of the user')
    .option('--json', 'print how many were revoked as JSON')
    .action(async (username: string, id: string | undefined, options: Revoke, command: Command) => {
      const one = target(id, options.all, 'grant');
      await ctx.withAdmin(ctx.config(command), async (admin: AdminPorts) => {
        let revoked = 1;
        if (one === undefined) revoked = (await revokeAllUserGrants(admin, username)).revoked;
        else await revokeUserGrant(admin, username, one);
        if (options.json) {
          ctx.json({ revoked });
          return;
        }
        ctx.out(
          one === undefined
            ? `revoked ${revoked} grant${revoked === 1 ? '' : 's'} of ${username}`
            : `revoked grant ${one} of ${username}`,
        );
      });
    });
}
