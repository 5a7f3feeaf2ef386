import { AuditEvent } from '@idgate/schema';
import { randomBytes } from '../internal/encoding.js';
import type { AuditEventRepository } from '../ports/audit-storage.js';
import type { Clock } from '../ports/runtime.js';

type Filled = 'id' | 'occurredAt';
type Defaulted = 'subject' | 'clientId' | 'address' | 'userAgent' | 'outcome';

/**
 * An audit event as a use case describes it: its `type`, `actor` and `details`; idgate fills `id`
 * and `occurredAt`, and `subject`, `clientId`, `address` and `userAgent` default to null,
 * `outcome` to `success`.
 */
export type AuditEventDraft = AuditEvent extends infer E
  ? E extends AuditEvent
    ? Omit<E, Filled | Defaulted> & Partial<Pick<E, Defaulted>>
    : never
  : never;

/** Where a request came from, as events record it (both personal data; null when unknown). */
export interface RequestOrigin {
  address?: string | null | undefined;
  userAgent?: string | null | undefined;
}

/**
 * Completes drafts into events: fills id and time, defaults the envelope, and parses each with
 * {@link AuditEvent}, which drops every field the type does not list.
 * @example const [event] = completeAuditEvents([{ type: 'sign-out', actor, details: { grantsRevoked: 0 } }], clock);
 */
export function completeAuditEvents(drafts: readonly AuditEventDraft[], clock: Clock): AuditEvent[] {
  const now = clock.now();
  const occurredAt = new Date(now).toISOString();
  return drafts.map((draft) =>
    AuditEvent.parse({
      subject: null,
      clientId: null,
      address: null,
      userAgent: null,
      outcome: 'success',
      ...stripUndefined(draft),
      id: auditEventId(now),
      occurredAt,
    }),
  );
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
): Promise<AuditEvent[]> {
  const events = completeAuditEvents(Array.isArray(draft) ? draft : [draft as AuditEventDraft], clock);
  if (events.length > 0) await storage.auditEvents.append(events);
  return events;
}

// An `undefined` from an optional input must not override the defaults above.
function stripUndefined(draft: AuditEventDraft): Record<string, unknown> {
  return Object.fromEntries(Object.entries(draft).filter(([, value]) => value !== undefined));
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
let last = { time: -1, random: [] as number[] };

/**
 * A ULID-like id: 10 base32 characters of `time` (ms), then 16 random ones. Ids made in the same
 * millisecond count up from the first one's random part, so they sort in the order they were made.
 * @example auditEventId(Date.now()) // '01JD3X…'
 */
export function auditEventId(time: number): string {
  let random: number[];
  if (time === last.time) {
    random = [...last.random];
    for (let i = random.length - 1; i >= 0; i--) {
      random[i] = ((random[i] ?? 0) + 1) % 32;
      if (random[i] !== 0) break;
    }
  } else {
    const bytes = randomBytes(16);
    random = [...bytes].map((byte) => byte % 32);
  }
  last = { time, random };
  let prefix = '';
  let rest = Math.max(0, Math.floor(time));
  for (let i = 0; i < 10; i++) {
    prefix = CROCKFORD.charAt(rest % 32) + prefix;
    rest = Math.floor(rest / 32);
  }
  return prefix + random.map((digit) => CROCKFORD.charAt(digit)).join('');
}
