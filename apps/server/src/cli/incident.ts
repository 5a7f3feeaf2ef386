import {
  endClientSessions,
  liftAddressBlocks,
  listBlockedAddresses,
  listClientGrants,
  listClientSessions,
  listNotBefore,
  revokeAllClientGrants,
  revokeClientGrant,
  setNotBefore,
} from '@idgate/core/admin';
import type { Command } from 'commander';
import { type CliContext, CliError, table } from './context.js';
import { everyPage } from './sessions.js';

type Json = { json?: boolean };

/** `idgate not-before`: revoke everything of a scope issued before an instant. */
export function registerNotBefore(program: Command, ctx: CliContext): void {
  const notBefore = program
    .command('not-before')
    .description('revoke everything issued before an instant: globally, per client or per user');

  notBefore
    .command('list')
    .description('list the not-befores in force')
    .option('--json', 'print a JSON array')
    .action(async (options: Json, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const all = await listNotBefore(admin);
        if (options.json) {
          ctx.json(all);
          return;
        }
        if (all.length === 0) {
          ctx.out('no not-before is set');
          return;
        }
        ctx.out(
          table(
            ['SCOPE', 'SUBJECT', 'NOT_BEFORE', 'SET'],
            all.map((n) => [n.scope, n.subject ?? '-', n.notBefore, n.setAt]),
          ),
        );
      });
    });

  notBefore
    .command('set')
    .description(
      'refuse every token, grant, session and code of the scope issued before the instant (default now), on every server within a second',
    )
    .option('--all', 'every token of every client and user')
    .option('--client <clientId>', "the client's tokens")
    .option('--user <username>', "the user's tokens")
    .option('--before <instant>', 'an ISO 8601 instant (default: now; never later than now)')
    .option('--json', 'print the not-before in force as JSON')
    .action(
      async (
        options: Json & { all?: boolean; client?: string; user?: string; before?: string },
        command: Command,
      ) => {
        const chosen = [options.all ? 'all' : undefined, options.client, options.user].filter(
          (o) => o !== undefined,
        );
        if (chosen.length !== 1) throw new CliError('give exactly one of --all, --client ID, --user NAME');
        const input = {
          scope: options.all ? 'global' : options.client !== undefined ? 'client' : 'user',
          ...(options.all ? {} : { subject: options.client ?? options.user }),
          ...(options.before === undefined ? {} : { before: options.before }),
        };
        await ctx.withAdmin(ctx.config(command), async (admin) => {
          const inForce = await setNotBefore(admin, input);
          if (options.json) {
            ctx.json(inForce);
            return;
          }
          const whose =
            inForce.scope === 'global' ? 'every token' : `the tokens of ${inForce.scope} ${inForce.subject}`;
          ctx.out(`${whose} issued before ${inForce.notBefore} is refused`);
        });
      },
    );
}

/** `idgate blocked-addresses`: the source addresses sign-ins are refused from. */
export function registerBlockedAddresses(program: Command, ctx: CliContext): void {
  const blocked = program
    .command('blocked-addresses')
    .description('list and lift the blocks of source addresses (too many failed sign-ins)');

  blocked
    .command('list')
    .description('list the addresses sign-ins are refused from now')
    .option('--json', 'print a JSON array')
    .action(async (options: Json, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const all = await listBlockedAddresses(admin);
        if (options.json) {
          ctx.json(all);
          return;
        }
        if (all.length === 0) {
          ctx.out('no address is blocked');
          return;
        }
        ctx.out(
          table(
            ['ADDRESS', 'CHANNEL', 'FAILURES', 'BLOCKED_UNTIL'],
            all.map((b) => [b.address, b.channel, String(b.failures), b.blockedUntil]),
          ),
        );
      });
    });

  blocked
    .command('lift')
    .description('lift the block of an address, or of every address with --all')
    .argument('[address]', 'an IPv4 or IPv6 address')
    .option('--all', 'lift every block (and restart the count of wrong device codes)')
    .option('--json', 'print the addresses that were blocked as JSON')
    .action(async (address: string | undefined, options: Json & { all?: boolean }, command: Command) => {
      if ((address === undefined) === !options.all) throw new CliError('give an address, or --all');
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const result = await liftAddressBlocks(admin, address);
        if (options.json) {
          ctx.json(result);
          return;
        }
        ctx.out(result.lifted.length === 0 ? 'no block lifted' : `lifted: ${result.lifted.join(', ')}`);
      });
    });
}

/** `idgate clients sessions|grants|end-sessions|revoke-grants`: a client's sessions and grants. */
export function registerClientSessions(clients: Command, ctx: CliContext): void {
  clients
    .command('sessions')
    .description('list the live browser sessions that signed in to a client')
    .argument('<clientId>')
    .option('--json', 'print a JSON array')
    .action(async (clientId: string, options: Json, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const all = await everyPage((query) => listClientSessions(admin, clientId, query));
        if (options.json) {
          ctx.json(all);
          return;
        }
        ctx.out(
          all.length === 0
            ? `no sessions signed in to ${clientId}`
            : table(
                ['ID', 'USER', 'CREATED', 'LAST_SEEN', 'ADDRESS'],
                all.map((s) => [s.id, s.userId, s.createdAt, s.lastSeenAt, s.sourceAddress ?? '-']),
              ),
        );
      });
    });

  clients
    .command('end-sessions')
    .description(
      'end every browser session that signed in to a client (signing those browsers out of everything), revoking the grants made in them',
    )
    .argument('<clientId>')
    .option('--json', 'print what ended as JSON')
    .action(async (clientId: string, options: Json, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const result = await endClientSessions(admin, clientId);
        if (options.json) ctx.json(result);
        else ctx.out(`ended ${result.ended} sessions; ${result.revokedGrants} grants revoked`);
      });
    });

  clients
    .command('grants')
    .description("list a client's live grants")
    .argument('<clientId>')
    .option('--json', 'print a JSON array')
    .action(async (clientId: string, options: Json, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const all = await everyPage((query) => listClientGrants(admin, clientId, query));
        if (options.json) {
          ctx.json(all);
          return;
        }
        ctx.out(
          all.length === 0
            ? `no grants of ${clientId}`
            : table(
                ['ID', 'USER', 'SCOPES', 'CREATED', 'LAST_USED', 'EXPIRES'],
                all.map((g) => [
                  g.id,
                  g.userId,
                  g.scopes.join(' ') || '-',
                  g.createdAt,
                  g.lastUsedAt ?? '-',
                  g.expiresAt,
                ]),
              ),
        );
      });
    });

  clients
    .command('revoke-grants')
    .description("revoke one of a client's grants, or all of them with --all")
    .argument('<clientId>')
    .argument('[grantId]', 'the grant id (see `idgate clients grants`)')
    .option('--all', 'revoke every grant of the client')
    .option('--json', 'print how many were revoked as JSON')
    .action(
      async (
        clientId: string,
        grantId: string | undefined,
        options: Json & { all?: boolean },
        command: Command,
      ) => {
        if ((grantId === undefined) === !options.all) throw new CliError('give a grant id, or --all');
        await ctx.withAdmin(ctx.config(command), async (admin) => {
          let revoked = 1;
          if (grantId === undefined) revoked = (await revokeAllClientGrants(admin, clientId)).revoked;
          else await revokeClientGrant(admin, clientId, grantId);
          if (options.json) ctx.json({ revoked });
          else ctx.out(`revoked ${revoked} grant${revoked === 1 ? '' : 's'} of ${clientId}`);
        });
      },
    );
}
