import type { AuditActor, AuditEventOf } from '@idgate/schema';
import type { AuditEventRepository } from '../ports/audit-storage.js';
import type { Clock } from '../ports/runtime.js';
import { type AuditEventIds, originFields, type RequestOrigin, recordAuditEvent } from './record.js';

type ChangeDetails = AuditEventOf<'admin.changed'>['details'];
type Json = NonNullable<ChangeDetails['before']>[string];

/** What an administrative use case changed, for {@link recordAdminChange}. */
export interface AdminChange {
  objectKind: ChangeDetails['objectKind'];
  objectId: string;
  action: ChangeDetails['action'];
  /** What the change was when create/update/delete does not say it (`unlock`, `set-password`, …). */
  operation?: string;
  /** The user the change is about, when it is about one. */
  subject?: string | null;
  clientId?: string | null;
  /** The fields that changed, as they were and as they are (see {@link changedFields}). */
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
}

/**
 * Who an administrative use case acts for: `auditActor()` of its ports, else idgate itself; and
 * where the request it answers came from.
 */
export interface AuditActorPort {
  /** Read at each change: the server answers the API key of the request in hand (undefined outside one); the CLI `cli`. */
  readonly auditActor?: (() => AuditActor | undefined) | undefined;
  /**
   * The admin request being answered (address, user agent, request id, trace id), for the events
   * it records; absent outside a request (the CLI).
   */
  readonly auditOrigin?: RequestOrigin | undefined;
}

// A field with any of these in its name never enters an event, whatever a caller passes.
const SECRET_FIELD = /secret|password|hash|token|private|credential/i;

/**
 * The fields among `fields` whose values differ between `before` and `after` (either may be null:
 * created, deleted), as JSON values (dates as ISO strings). Secret fields are never included.
 * @example changedFields(old, updated, ['email', 'groups']) // { before: { groups: ['a'] }, after: { groups: ['a', 'b'] } }
 */
export function changedFields<T extends object>(
  before: T | null,
  after: T | null,
  fields: readonly (keyof T & string)[],
): { before: Record<string, Json> | null; after: Record<string, Json> | null } {
  const was: Record<string, Json> = {};
  const is: Record<string, Json> = {};
  for (const field of fields) {
    if (SECRET_FIELD.test(field)) continue;
    const a = toJson(before?.[field]);
    const b = toJson(after?.[field]);
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    if (before !== null) was[field] = a ?? null;
    if (after !== null) is[field] = b ?? null;
  }
  return { before: before === null ? null : was, after: after === null ? null : is };
}

/**
 * Records an `admin.changed` event through `storage` (a transaction's, so it lands with the
 * change), acted by `ports.auditActor()`. Secret-named fields are dropped from before/after. An
 * update that changed no field and names no operation (a PATCH repeating what is there) records
 * nothing: the trail holds changes, not requests.
 * @example await recordAdminChange(tx, ports, { objectKind: 'user', objectId: user.id, action: 'deleted', subject: user.id });
 */
export async function recordAdminChange(
  storage: { auditEvents: AuditEventRepository },
  ports: AuditActorPort & { clock: Clock; auditIds?: AuditEventIds | undefined },
  change: AdminChange,
): Promise<void> {
  if (
    change.action === 'updated' &&
    change.operation === undefined &&
    isEmpty(change.before) &&
    isEmpty(change.after)
  )
    return;
  await recordAuditEvent(
    storage,
    {
      type: 'admin.changed',
      actor: adminActor(ports),
      subject: change.subject ?? null,
      clientId: change.clientId ?? null,
      ...originFields(ports.auditOrigin),
      details: {
        objectKind: change.objectKind,
        objectId: change.objectId,
        action: change.action,
        operation: change.operation ?? null,
        before: withoutSecrets(change.before),
        after: withoutSecrets(change.after),
      },
    },
    ports.clock,
    ports.auditIds,
  );
}

/**
 * Records the `admin.changed` event of one stored object: created (`before` null), deleted
 * (`after` null) or updated — the action follows from which is missing — with the `fields` whose
 * values differ (see {@link changedFields}), through {@link recordAdminChange}.
 * @example await recordObjectChange(tx, ports, { objectKind: 'user', objectId: user.id, subject: user.id }, user, updated, ['groups']);
 */
export function recordObjectChange<T extends object>(
  storage: { auditEvents: AuditEventRepository },
  ports: AuditActorPort & { clock: Clock; auditIds?: AuditEventIds | undefined },
  object: Omit<AdminChange, 'action' | 'before' | 'after'>,
  before: T | null,
  after: T | null,
  fields: readonly (keyof T & string)[],
): Promise<void> {
  const action = before === null ? 'created' : after === null ? 'deleted' : 'updated';
  return recordAdminChange(storage, ports, { ...object, action, ...changedFields(before, after, fields) });
}

/**
 * The actor of an administrative change: the ports' `auditActor()`, else `system`.
 * @example adminActor(ports) // { kind: 'api-key', id: 'k1', name: 'idg_ab12' }
 */
export function adminActor(ports: AuditActorPort): AuditActor {
  return ports.auditActor?.() ?? { kind: 'system', id: null };
}

const isEmpty = (fields: Record<string, unknown> | null | undefined): boolean =>
  fields !== null && fields !== undefined && Object.keys(fields).length === 0;

function withoutSecrets(fields: Record<string, unknown> | null | undefined): Record<string, Json> | null {
  if (fields === null || fields === undefined) return null;
  return Object.fromEntries(
    Object.entries(fields)
      .filter(([name]) => !SECRET_FIELD.test(name))
      .map(([name, value]) => [name, toJson(value) ?? null]),
  );
}

function toJson(value: unknown): Json | undefined {
  if (value === undefined) return undefined;
  if (value instanceof Date) return value.toISOString();
  return JSON.parse(JSON.stringify(value)) as Json;
}
