import type { AuditEvent } from '@idgate/schema';
import type { AuditEventListQuery, AuditEventRepository } from './audit-storage.js';
import { StorageConflictError } from './storage.js';

/** The audit table, part of the in-memory storage's state (and of its snapshots). */
export interface AuditTables {
  /** Keyed by event id. */
  auditEvents: Map<string, AuditEvent>;
}

export function emptyAuditTables(): AuditTables {
  return { auditEvents: new Map() };
}

const copy = <T>(value: T): T => structuredClone(value);
const at = (event: AuditEvent) => Date.parse(event.occurredAt);
const order = (a: AuditEvent, b: AuditEvent) => at(a) - at(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The audit repository over `tables()`, read on every call because a rolled-back transaction
 * replaces the tables with a snapshot (which takes the transaction's events with it).
 */
export function createMemoryAuditRepository(tables: () => AuditTables): {
  auditEvents: AuditEventRepository;
} {
  return {
    auditEvents: {
      async append(events) {
        const { auditEvents } = tables();
        if (events.some((e) => auditEvents.has(e.id))) throw new StorageConflictError('id');
        for (const event of events) auditEvents.set(event.id, copy(event));
      },
      async list(query: AuditEventListQuery) {
        const { after, userId, types, since, until } = query;
        const matches = (e: AuditEvent) =>
          (after === undefined ||
            at(e) > after.occurredAt.getTime() ||
            (at(e) === after.occurredAt.getTime() && e.id > after.id)) &&
          (userId === undefined || e.subject === userId) &&
          (types === undefined || types.length === 0 || types.includes(e.type)) &&
          (since === undefined || at(e) >= since.getTime()) &&
          (until === undefined || at(e) < until.getTime());
        return copy([...tables().auditEvents.values()].filter(matches).sort(order).slice(0, query.limit));
      },
      async purgeBefore(cutoff, limit = Number.POSITIVE_INFINITY) {
        const { auditEvents } = tables();
        const old = [...auditEvents.values()].filter((e) => at(e) < cutoff.getTime()).sort(order);
        for (const event of old.slice(0, limit)) auditEvents.delete(event.id);
        return Math.min(old.length, limit);
      },
      // Memory keeps no chain: every event is unchained, and no recorded head can be found.
      async verifyChains(heads, now) {
        const broken = heads.map((head) => ({
          writer: head.writer,
          seq: head.seq,
          eventId: null,
          kind: 'deleted' as const,
          message: `the recorded head (seq ${head.seq}) is not in the trail`,
        }));
        return {
          intact: broken.length === 0,
          verifiedAt: now.toISOString(),
          events: 0,
          unchained: tables().auditEvents.size,
          writers: [],
          broken,
          heads: [],
        };
      },
    },
  };
}
