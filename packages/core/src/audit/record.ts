import { AuditEvent, storedUserAgent } from '@idgate/schema';
import type { AuditEventRepository } from '../ports/audit-storage.js';
import { type Clock, type Random, webCryptoRandom } from '../ports/runtime.js';

type Filled = 'id' | 'occurredAt';
type Defaulted = 'subject' | 'clientId' | 'address' | 'userAgent' | 'requestId' | 'traceId' | 'outcome';

/**
 * An audit event as a use case describes it: its `type`, `actor` and `details`; idgate fills `id`
 * and `occurredAt`, and `subject`, `clientId`, `address`, `userAgent`, `requestId` and `traceId`
 * default to null, `outcome` to `success`.
 */
export type AuditEventDraft = AuditEvent extends infer E
  ? E extends AuditEvent
    ? Omit<E, Filled | Defaulted> & Partial<Pick<E, Defaulted>>
    : never
  : never;

/**
 * Where a request came from, as events record it: the caller's address and user agent (both
 * personal data), the request's id and its OpenTelemetry trace id; null or absent when unknown.
 */
export interface RequestOrigin {
  address?: string | null | undefined;
  userAgent?: string | null | undefined;
  requestId?: string | null | undefined;
  traceId?: string | null | undefined;
}

/**
 * The envelope fields of an event made while answering `origin` (none: all null), to spread
 * into a draft.
 * @example recordAuditEvent(tx, { type: 'sign-out', actor, ...originFields(caller), details }, clock);
 */
export function originFields(origin: RequestOrigin | undefined): {
  address: string | null;
  userAgent: string | null;
  requestId: string | null;
  traceId: string | null;
} {
  return {
    address: origin?.address ?? null,
    userAgent: origin?.userAgent ?? null,
    requestId: origin?.requestId ?? null,
    traceId: origin?.traceId ?? null,
  };
}

/**
 * Completes drafts into events: fills id and time, defaults the envelope, cuts the user agent to
 * `LIMITS.userAgentLength`, and parses each with {@link AuditEvent}, which drops every field the
 * type does not list. `ids` are an instance's
 * (see {@link createAuditEventIds}); without, the ids count up within this call only.
 * @example const [event] = completeAuditEvents([{ type: 'sign-out', actor, details: { grantsRevoked: 0 } }], clock);
 */
export function completeAuditEvents(
  drafts: readonly AuditEventDraft[],
  clock: Clock,
  ids: AuditEventIds = createAuditEventIds(),
): AuditEvent[] {
  const now = clock.now();
  const occurredAt = new Date(now).toISOString();
  return drafts.map((draft) => {
    const event: Record<string, unknown> = {
      subject: null,
      clientId: null,
      address: null,
      userAgent: null,
      requestId: null,
      traceId: null,
      outcome: 'success',
      ...stripUndefined(draft),
      id: ids(now),
      occurredAt,
    };
    if (typeof event.userAgent === 'string') event.userAgent = storedUserAgent(event.userAgent);
    return AuditEvent.parse(event);
  });
}

/**
 * Records audit events through `storage`: pass the storage a transaction handed you, so the events
 * land with the change they describe or not at all (a rolled-back change leaves none).
 * @returns the events as stored.
 * @example
 * await storage.transaction(async (tx) => {
 *   await tx.users.update(user.id, { disabled: true });
 *   await recordAuditEvent(tx, { type: 'admin.changed', actor, subject: user.id, details }, clock);
 * });
 */
export async function recordAuditEvent(
  storage: { auditEvents: AuditEventRepository },
  draft: AuditEventDraft | readonly AuditEventDraft[],
  clock: Clock,
  ids?: AuditEventIds,
): Promise<AuditEvent[]> {
  const drafts = Array.isArray(draft) ? draft : [draft as AuditEventDraft];
  const events = completeAuditEvents(drafts, clock, ids);
  if (events.length > 0) await storage.auditEvents.append(events);
  return events;
}

// An `undefined` from an optional input must not override the defaults above.
function stripUndefined(draft: AuditEventDraft): Record<string, unknown> {
  return Object.fromEntries(Object.entries(draft).filter(([, value]) => value !== undefined));
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Makes the id of an audit event recorded at `time` (ms); see {@link createAuditEventIds}. */
export type AuditEventIds = (time: number) => string;

/**
 * A maker of ULID-like ids: 10 base32 characters of the time (ms), then 16 random ones. Ids it
 * makes in the same millisecond count up from the first one's random part, so they sort in the
 * order they were made; what it remembers for that is its own (one per idgate instance).
 * @example const ids = createAuditEventIds(random); ids(Date.now()) // '01JD3X…'
 */
export function createAuditEventIds(random: Random = webCryptoRandom): AuditEventIds {
  let last = { time: -1, digits: [] as number[] };
  return (time) => {
    let digits: number[];
    if (time === last.time) {
      digits = [...last.digits];
      for (let i = digits.length - 1; i >= 0; i--) {
        digits[i] = ((digits[i] ?? 0) + 1) % 32;
        if (digits[i] !== 0) break;
      }
    } else {
      digits = [...random.bytes(16)].map((byte) => byte % 32);
    }
    last = { time, digits };
    let prefix = '';
    let rest = Math.max(0, Math.floor(time));
    for (let i = 0; i < 10; i++) {
      prefix = CROCKFORD.charAt(rest % 32) + prefix;
      rest = Math.floor(rest / 32);
    }
    return prefix + digits.map((digit) => CROCKFORD.charAt(digit)).join('');
  };
}
