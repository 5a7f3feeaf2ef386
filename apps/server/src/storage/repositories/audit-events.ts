import type { AuditEventRepository } from '@idgate/core';
import { AuditEvent } from '@idgate/schema';
import type { Selectable } from 'kysely';
import type { AuditEventsTable } from '../schema.js';
import { fromJsonObject, toDate, toMs } from './columns.js';
import { insertNew, keysetPage, type RecordTable, type RepositoryContext } from './support.js';

const EVENTS: RecordTable<'audit_events', AuditEvent> = { name: 'audit_events', toRecord: toEvent };

// Rows per INSERT: well under SQLite's 32766 bound parameters at 14 columns a row.
const BATCH = 500;

export function createAuditEventRepository(ctx: RepositoryContext): AuditEventRepository {
  const { db } = ctx;
  return {
    async append(events) {
      for (let start = 0; start < events.length; start += BATCH) {
        const rows = events.slice(start, start + BATCH).map(toRow);
        // Appended inside the change's transaction: no savepoint (see insertNew).
        await insertNew(ctx, 'audit_events', 'id', 'id', rows);
      }
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

    async purgeBefore(cutoff, limit) {
      const old = db.selectFrom('audit_events').select('id').where('occurred_at', '<', toMs(cutoff));
      const result = await db
        .deleteFrom('audit_events')
        .where('id', 'in', limit === undefined ? old : old.orderBy('occurred_at').orderBy('id').limit(limit))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

function toRow(event: AuditEvent): AuditEventsTable {
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
