import type { AuditChainHead, AuditChainVerification, AuditEvent, AuditEventType } from '@idgate/schema';

/**
 * Which audit events a listing shows and where its page starts: oldest first by
 * (`occurredAt`, `id`), those after `after`, at most `limit`.
 */
export interface AuditEventListQuery {
  limit: number;
  /** The sort key of the last event of the page before. */
  after?: { occurredAt: Date; id: string };
  /** Only events about this user (their `subject`). */
  userId?: string;
  /** Only events of these types (any of them); all types when absent or empty. */
  types?: readonly AuditEventType[];
  /** Only events at or after this instant. */
  since?: Date;
  /** Only events before this instant. */
  until?: Date;
}

/**
 * The audit trail. Part of {@link Storage}, so `storage.transaction(tx => …)` appends an event in
 * the same transaction as the change it records: both land, or neither does.
 */
export interface AuditEventRepository {
  /** Appends events (already parsed by `AuditEvent`); ids are unique. */
  append(events: readonly AuditEvent[]): Promise<void>;
  /** One keyset page (see {@link AuditEventListQuery}). */
  list(query: AuditEventListQuery): Promise<AuditEvent[]>;
  /**
   * Deletes the events that occurred before `cutoff` — the oldest `limit` of them when a limit is
   * given, so a large purge goes in batches; returns how many went. A store that chains events
   * (see {@link verifyChains}) deletes only the start of each chain, up to its first event at or
   * after `cutoff`, and remembers the last link it deleted, so what remains still verifies.
   */
  purgeBefore(cutoff: Date, limit?: number): Promise<number>;
  /**
   * Verifies the tamper-evident chains of the trail (a store that keeps none has only unchained
   * events), and that each of `heads`, recorded earlier, is still there with its hash.
   * `verifiedAt` is `now`.
   */
  verifyChains(heads: readonly AuditChainHead[], now: Date): Promise<AuditChainVerification>;
}
