import {
  type AuditChainVerification,
  AuditChainVerifyRequest,
  type AuditEvent,
  AuditEventQuery,
} from '@idgate/schema';
import type { AuditEventListQuery } from '../ports/audit-storage.js';
import type { Clock } from '../ports/runtime.js';
import type { Storage } from '../ports/storage.js';
import { AdminError, parseAdminInput } from './errors.js';
import { decodeKeysetCursor, encodeKeysetCursor } from './keyset-cursor.js';
import type { AdminPage } from './sessions.js';

/** The filters of an audit listing, resolved: the storage query without its page. */
export type AuditEventFilter = Omit<AuditEventListQuery, 'limit' | 'after'>;

/**
 * The filters of `query` (as {@link AuditEventQuery} takes them, from a query string or the SDK):
 * `user` is a username (any case) or, when no user has that name, a user id as events record it —
 * so the events of a deleted user stay findable by their id.
 * @throws AdminError `invalid_input` naming the first bad field (`since` after `until` names `until`).
 * @example const filter = await auditEventFilter(storage, { user: 'alice', type: ['sign-in.failed'] });
 */
export async function auditEventFilter(
  storage: Pick<Storage, 'users'>,
  query: Omit<AuditEventQuery, 'limit' | 'cursor'>,
): Promise<AuditEventFilter> {
  const filter: AuditEventFilter = {};
  if (query.user !== undefined) {
    const user = await storage.users.findByUsername(query.user);
    filter.userId = user?.id ?? query.user;
  }
  if (query.type !== undefined && query.type.length > 0) filter.types = query.type;
  if (query.since !== undefined) filter.since = new Date(query.since);
  if (query.until !== undefined) filter.until = new Date(query.until);
  if (filter.since !== undefined && filter.until !== undefined && filter.until <= filter.since)
    throw new AdminError('invalid_input', 'audit_event', 'until: must be later than since');
  return filter;
}

/**
 * `query` checked against {@link AuditEventQuery}.
 * @throws AdminError `invalid_input` naming the first bad field (`type`, `since`, `limit`, …).
 * @example const query = parseAuditEventQuery(request.query);
 */
export function parseAuditEventQuery(query: unknown): AuditEventQuery {
  return parseAdminInput(AuditEventQuery, query ?? {}, 'audit_event');
}

/**
 * One page of the audit trail, oldest first by (`occurredAt`, `id`), filtered by user, types and a
 * time range; the cursor resumes after the page's last event. The one listing behind
 * `GET /admin/v1/events`, `idgate audit` and the SDK.
 * @param query as the query string (or the SDK) sends it; see {@link AuditEventQuery}.
 * @throws AdminError `invalid_input` naming a bad filter, limit or cursor.
 * @example const { items, nextCursor } = await listAuditEvents(ports, { type: ['sign-in.failed'], limit: '50' });
 */
export async function listAuditEvents(
  ports: { storage: Pick<Storage, 'users' | 'auditEvents'> },
  query: unknown,
): Promise<AdminPage<AuditEvent>> {
  const { limit, cursor, ...filters } = parseAuditEventQuery(query);
  const filter = await auditEventFilter(ports.storage, filters);
  const position = cursor === undefined ? undefined : decodeKeysetCursor(cursor, 'audit_event');
  const rows = await ports.storage.auditEvents.list({
    ...filter,
    limit: limit + 1,
    ...(position === undefined ? {} : { after: { occurredAt: position.createdAt, id: position.id } }),
  });
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return {
    items,
    nextCursor:
      rows.length > limit && last !== undefined
        ? encodeKeysetCursor({ createdAt: new Date(last.occurredAt), id: last.id })
        : null,
  };
}

/**
 * Verifies the tamper-evident chains of the audit trail, and the heads in `input` (as
 * {@link AuditChainVerifyRequest} takes them: heads recorded from an earlier verification). The one
 * check behind `POST /admin/v1/events/verify`, `idgate audit verify` and the SDK.
 * @throws AdminError `invalid_input` naming a bad head.
 * @example const { intact, broken, heads } = await verifyAuditTrail(ports, { heads: recorded });
 */
export async function verifyAuditTrail(
  ports: { storage: Pick<Storage, 'auditEvents'>; clock: Clock },
  input: unknown,
): Promise<AuditChainVerification> {
  const { heads = [] } = parseAdminInput(AuditChainVerifyRequest, input ?? {}, 'audit_event');
  return ports.storage.auditEvents.verifyChains(heads, new Date(ports.clock.now()));
}
