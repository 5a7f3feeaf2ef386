import * as z from 'zod/mini';
import { Timestamp } from './admin/fields.js';
import { checked } from './checked.js';

const Sha256Hex = checked(z.string(), z.regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits (SHA-256)'));
const WriterId = checked(
  z.string(),
  z.minLength(1, 'must not be empty'),
  z.maxLength(128, 'must be at most 128 characters'),
);
const Seq = checked(z.number(), z.int('must be a whole number'), z.gte(1, 'must be at least 1'));

/**
 * The last link of one writer's chain of audit events: its writer id, sequence number and hash.
 * Recorded outside idgate (a SIEM, a ticket, a signed log), it lets a later verification prove that
 * no event up to it was deleted or rewritten since.
 * @example AuditChainHead.parse({ writer: '01JD3X…', seq: 42, hash: 'ab…' })
 */
export const AuditChainHead = z.object({ writer: WriterId, seq: Seq, hash: Sha256Hex });
export type AuditChainHead = z.infer<typeof AuditChainHead>;

/**
 * What is wrong at a broken link: `altered` — the event's stored fields no longer hash to its
 * hash; `deleted` — events are missing (a gap in the sequence, the start of a chain with no purge
 * anchor to explain it, or a recorded head that is gone); `inserted` — the event does not follow
 * the one before it (an event inserted, replaced or moved); `rewritten` — a recorded head is there
 * with another hash (the chain was recomputed).
 * @example AuditChainBreakKind.parse('deleted')
 */
export const AuditChainBreakKind = z.enum(['altered', 'deleted', 'inserted', 'rewritten']);
export type AuditChainBreakKind = z.infer<typeof AuditChainBreakKind>;

/**
 * The first broken link of one writer's chain: the event where the check failed (null when that
 * event is itself gone), its place in the chain and what is wrong, in words too.
 * @example AuditChainBreak.parse({ writer: 'w', seq: 7, eventId: '01JD…', kind: 'altered', message: '…' })
 */
export const AuditChainBreak = z.object({
  writer: z.string(),
  seq: z.number(),
  eventId: z.nullable(z.string()),
  kind: AuditChainBreakKind,
  message: z.string(),
});
export type AuditChainBreak = z.infer<typeof AuditChainBreak>;

/**
 * One writer's chain as verified: how many events it holds now, where it starts (`anchor`: the
 * last link the retention purge deleted, or null from its first event) and its head (null when
 * every event was purged), and its first broken link, if any.
 * @example AuditChainWriter.parse({ writer: 'w', events: 3, anchor: null, head: { … }, broken: null })
 */
export const AuditChainWriter = z.object({
  writer: z.string(),
  events: z.number(),
  anchor: z.nullable(z.object({ seq: z.number(), hash: z.string() })),
  head: z.nullable(
    z.object({ seq: z.number(), hash: z.string(), eventId: z.string(), occurredAt: Timestamp }),
  ),
  broken: z.nullable(AuditChainBreak),
});
export type AuditChainWriter = z.infer<typeof AuditChainWriter>;

/**
 * The result of verifying the audit trail: `intact` when every chain and every recorded head
 * checked out; `events` chained events checked; `unchained` events stored without a chain (before
 * the chain existed, or by a server too old to chain); each writer; every break (the first of each
 * broken chain, and each recorded head that failed); and the heads to record for next time.
 * @example const { intact, broken } = AuditChainVerification.parse(await response.json());
 */
export const AuditChainVerification = z.object({
  intact: z.boolean(),
  verifiedAt: Timestamp,
  events: z.number(),
  unchained: z.number(),
  writers: z.array(AuditChainWriter),
  broken: z.array(AuditChainBreak),
  heads: z.array(AuditChainHead),
});
export type AuditChainVerification = z.infer<typeof AuditChainVerification>;

/**
 * What a verification may be asked to check besides the chains: heads recorded earlier (from a
 * previous verification's `heads`), each of which must still be in the trail with the same hash
 * (or purged by retention). At most 10,000.
 * @example AuditChainVerifyRequest.parse({ heads: [{ writer: 'w', seq: 42, hash: 'ab…' }] })
 */
export const AuditChainVerifyRequest = z.object({
  heads: z.optional(checked(z.array(AuditChainHead), z.maxLength(10_000, 'must hold at most 10000 heads'))),
});
export type AuditChainVerifyRequest = z.infer<typeof AuditChainVerifyRequest>;
