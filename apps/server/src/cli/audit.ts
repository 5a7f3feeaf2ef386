import {
  auditEventFilter,
  followAuditEvents,
  listAuditEvents,
  parseAuditEventQuery,
} from '@idgate/core/admin';
import type { AuditEvent } from '@idgate/schema';
import type { Command } from 'commander';
import { auditFollowTiming } from '../audit/follow-timing.js';
import { registerAuditVerify } from './audit-verify.js';
import { type CliContext, CliError, table } from './context.js';
import { parseDuration } from './durations.js';

interface AuditOptions {
  user?: string;
  type: string[];
  since?: string;
  until?: string;
  limit?: string;
  json?: boolean;
  follow?: boolean;
}

/** An instant as `--since`/`--until` take it: ISO 8601, or a duration ago (`15m`, `2h`, `7d`). */
function instant(raw: string, option: string, now: number): string {
  if (/^\d+[smhd]?$/.test(raw.trim())) return new Date(now - parseDuration(raw, option) * 1000).toISOString();
  const parsed = Date.parse(raw);
  if (Number.isNaN(parsed) || !/^\d{4}-\d{2}-\d{2}/.test(raw))
    throw new CliError(
      `${option} ${JSON.stringify(raw)}: must be an ISO 8601 instant or a duration ago (15m, 2h, 7d)`,
    );
  return new Date(parsed).toISOString();
}

function line(event: AuditEvent): string[] {
  const actor = `${event.actor.kind}${(event.actor.name ?? event.actor.id) ? `:${event.actor.name ?? event.actor.id}` : ''}`;
  return [
    event.occurredAt,
    event.type,
    event.outcome,
    actor,
    event.subject ?? '-',
    event.clientId ?? '-',
    event.address ?? '-',
  ];
}

const HEADER = ['OCCURRED', 'TYPE', 'OUTCOME', 'ACTOR', 'SUBJECT', 'CLIENT', 'ADDRESS'];

export function registerAudit(program: Command, ctx: CliContext): void {
  const audit = program.command('audit');
  registerAuditVerify(audit, ctx);
  audit
    .description('read the audit trail of security events, oldest first (--follow tails it live)')
    .option('--user <user>', 'only events about this user (a username, or a user id)')
    .option(
      '--type <type>',
      'only events of this type (repeat for several)',
      (v: string, all: string[]) => [...all, v],
      [],
    )
    .option('--since <when>', 'from this instant on: ISO 8601, or a duration ago (15m, 2h, 7d)')
    .option('--until <when>', 'before this instant: ISO 8601, or a duration ago')
    .option('--limit <n>', 'print at most this many events')
    .option('--json', 'print one JSON event per line (JSON lines)')
    .option('--follow', 'after the events so far, print new ones as they happen, until Ctrl-C')
    .action(async (options: AuditOptions, command: Command) => {
      const config = ctx.config(command);
      await ctx.withAdmin(config, async (admin) => {
        const now = admin.clock.now();
        let limit = Number.POSITIVE_INFINITY;
        if (options.limit !== undefined) {
          limit = Number(options.limit);
          if (!/^\d{1,9}$/.test(options.limit) || limit < 1)
            throw new CliError(`--limit ${JSON.stringify(options.limit)}: must be a positive whole number`);
        }
        const query = {
          ...(options.user === undefined ? {} : { user: options.user }),
          ...(options.type.length === 0 ? {} : { type: options.type }),
          ...(options.since === undefined ? {} : { since: instant(options.since, '--since', now) }),
          ...(options.until === undefined ? {} : { until: instant(options.until, '--until', now) }),
        };
        const rows: string[][] = [];
        const print = (event: AuditEvent) => {
          if (options.json) ctx.out(JSON.stringify(event));
          else if (options.follow) ctx.out(line(event).join('  '));
          else rows.push(line(event));
        };
        let shown = 0;
        let lastId: string | undefined;
        let cursor: string | null = null;
        do {
          const size = Math.min(500, limit - shown);
          const page = await listAuditEvents(admin, {
            ...query,
            limit: String(size),
            ...(cursor === null ? {} : { cursor }),
          });
          for (const event of page.items) {
            print(event);
            lastId = event.id;
          }
          shown += page.items.length;
          cursor = page.nextCursor;
        } while (cursor !== null && shown < limit);
        if (!options.json && !options.follow) {
          ctx.out(rows.length === 0 ? 'no events' : table(HEADER, rows));
          return;
        }
        if (!options.follow) return;
        const abort = new AbortController();
        const stop = () => abort.abort();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        try {
          const { limit: _l, cursor: _c, ...filters } = parseAuditEventQuery(query);
          const filter = await auditEventFilter(admin.storage, filters);
          for await (const event of followAuditEvents(admin.storage.auditEvents, filter, {
            signal: abort.signal,
            ...auditFollowTiming(config.audit),
            afterId: lastId,
            fromMs: filter.since?.getTime() ?? now,
          }))
            print(event);
        } finally {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
        }
      });
    });
}
