import type { AuditEventRepository } from '@idgate/core';
import { AuditEvent } from '@idgate/schema';
import type { Selectable } from 'kysely';
import type { LinkedRow, UnlinkedRow } from '../../audit/chain.js';
import type { AuditEventsTable } from '../schema.js';
import { purgeAuditChains, verifyAuditChains } from './audit-chains.js';
import { fromJsonObject, toDate, toMs } from './columns.js';
import { insertNew, keysetPage, type RecordTable, type RepositoryContext } from './support.js';

const EVENTS: RecordTable<'audit_events', AuditEvent> = { name: 'audit_events', toRecord: toEvent };

// Rows per INSERT: well under SQLite's 32766 bound parameters at 18 columns a row.
const BATCH = 500;

export function createAuditEventRepository(ctx: RepositoryContext): AuditEventRepository {
  const { db } = ctx;
  return {
    // The server's storage links and inserts events itself (see `sql-storage.ts`); this append
    // stores them unchained, for storage built without it.
    async append(events) {
      await insertAuditRows(ctx, events.map(toAuditRow));
    },

    async list(query) {
      const { after, userId, types, since, until } = query;
      let select = db.selectFrom('audit_events').selectAll();
      if (userId !== undefined) select = select.where('user_id', '=', userId);
      if (types !== undefined && types.length > 0) select = select.where('type', 'in', [...types]);
      if (since !== undefined) select = select.where('occurred_at', '>=', toMs(since));
      if (until !== undefined) select = select.where('occurred_at', '<', toMs(until));
      const page = {
        limit: query.limit,
        ...(after === undefined ? {} : { after: { createdAt: after.occurredAt, id: after.id } }),
      };
      return keysetPage(ctx, EVENTS, select, page, 'id', 'occurred_at');
    },

    purgeBefore: (cutoff, limit) => purgeAuditChains(ctx, cutoff, limit ?? Number.POSITIVE_INFINITY),

    verifyChains: (heads, now) => verifyAuditChains(ctx, heads, now),
  };
}

/** Inserts rows, `BATCH` to a statement (inside the caller's transaction: no savepoint, see insertNew). */
export async function insertAuditRows(
  ctx: RepositoryContext,
  rows: readonly (UnlinkedRow | LinkedRow)[],
): Promise<void> {
  for (let start = 0; start < rows.length; start += BATCH) {
    await insertNew(ctx, 'audit_events', 'id', 'id', rows.slice(start, start + BATCH) as AuditEventsTable[]);
  }
}

/** An event as its row, before it is linked into a chain. */
export function toAuditRow(event: AuditEvent): UnlinkedRow {
  return {
    id: event.id,
    type: event.type,
    occurred_at: toMs(new Date(event.occurredAt)),
    actor_kind: event.actor.kind,
    actor_id: event.actor.id,
    actor_name: event.actor.name ?? null,
    user_id: event.subject,
    client_id: event.clientId,
    address: event.address,
    user_agent: event.userAgent,
    request_id: event.requestId,
    trace_id: event.traceId,
    outcome: event.outcome,
    details: JSON.stringify(event.details),
  };
}

// Parsed on the way out too: a row written by a newer version with fields this one does not know
// loses them rather than passing unchecked data on.
function toEvent(row: Selectable<AuditEventsTable>): AuditEvent {
  return AuditEvent.parse({
    id: row.id,
    type: row.type,
    occurredAt: toDate(row.occurred_at).toISOString(),
    actor: {
      kind: row.actor_kind,
      id: row.actor_id,
      ...(row.actor_name === null ? {} : { name: row.actor_name }),
    },
    subject: row.user_id,
    clientId: row.client_id,
    address: row.address,
    userAgent: row.user_agent,
    requestId: row.request_id,
    traceId: row.trace_id,
    outcome: row.outcome,
    details: fromJsonObject(row.details, 'audit_events.details'),
  });
}
