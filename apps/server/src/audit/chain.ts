import { hash } from 'node:crypto';
import type { AuditEventsTable } from '../storage/schema.js';

/**
 * The tamper-evident chain of the audit trail, defined so an auditor can check it with nothing but
 * SQL and SHA-256 (docs/operating/audit.md, "Verifying the trail"):
 *
 * - every process that writes events (a server replica, a CLI run) is a **writer** with an id of
 *   its own, made when it starts (so replicas never wait on one shared head);
 * - a writer numbers its events `seq` 1, 2, 3, … in the order they commit;
 * - `prev_hash` is the `hash` of the writer's event `seq - 1` ({@link GENESIS_HASH} for seq 1);
 * - `hash` is the lowercase hex SHA-256 of the UTF-8 bytes of the canonical JSON (RFC 8785) of the
 *   row's other columns as stored — {@link HASHED_COLUMNS}, with their SQL names: text as strings,
 *   `occurred_at` (epoch ms) and `seq` as integers, NULL as null, `details` as the stored JSON text
 *   (a string, not re-parsed). What is hashed is what is stored: under `audit.personalData` hash or
 *   omit, the HMACs or nulls that replaced personal data.
 */
export const GENESIS_HASH = '0'.repeat(64);

/** Every column of `audit_events` but `hash`, in code-point order (RFC 8785 §3.2.3). */
export const HASHED_COLUMNS = [
  'actor_id',
  'actor_kind',
  'actor_name',
  'address',
  'client_id',
  'details',
  'id',
  'occurred_at',
  'outcome',
  'prev_hash',
  'request_id',
  'seq',
  'trace_id',
  'type',
  'user_agent',
  'user_id',
  'writer_id',
] as const satisfies readonly (keyof AuditEventsTable)[];

/** A row of `audit_events` before it is linked into a chain. */
export type UnlinkedRow = Omit<AuditEventsTable, 'writer_id' | 'seq' | 'prev_hash' | 'hash'>;

/** A row linked into a chain: every chain column set. */
export type LinkedRow = UnlinkedRow & { writer_id: string; seq: number; prev_hash: string; hash: string };

/**
 * The canonical JSON of a row's hashed columns. Every value is a string, a safe integer or null,
 * for which RFC 8785 serializes exactly as `JSON.stringify` does; the keys are written in
 * {@link HASHED_COLUMNS}' order (one object literal and one `JSON.stringify`: a loop over the
 * names cost twice as much, on every event of `audit.tokenReview: all`).
 */
export function canonicalRow(row: Record<(typeof HASHED_COLUMNS)[number], string | number | null>): string {
  // Drivers hand bigint columns back as strings on some paths: the hash is over the integer.
  const integer = (value: string | number | null) => (value === null ? null : Number(value));
  return JSON.stringify({
    actor_id: row.actor_id,
    actor_kind: row.actor_kind,
    actor_name: row.actor_name,
    address: row.address,
    client_id: row.client_id,
    details: row.details,
    id: row.id,
    occurred_at: integer(row.occurred_at),
    outcome: row.outcome,
    prev_hash: row.prev_hash,
    request_id: row.request_id,
    seq: integer(row.seq),
    trace_id: row.trace_id,
    type: row.type,
    user_agent: row.user_agent,
    user_id: row.user_id,
    writer_id: row.writer_id,
  } satisfies Record<(typeof HASHED_COLUMNS)[number], unknown>);
}

/** The `hash` a row must carry: SHA-256 (hex) of {@link canonicalRow}. */
export function linkHash(row: Parameters<typeof canonicalRow>[0]): string {
  // One-shot `hash` (Node 20.12+): no Hash object per event.
  return hash('sha256', canonicalRow(row), 'hex');
}

/** Rows linked after a writer's head, waiting for their transaction to end. */
export interface PendingLinks {
  readonly rows: LinkedRow[];
  /** The transaction committed: the last row becomes the head; the next writer goes on. */
  committed(): void;
  /**
   * The transaction failed after the rows were linked: whether they are stored is unknown (a
   * commit whose answer was lost), so the writer starts a new chain under a new id.
   */
  failed(): void;
}

/**
 * One process's writer: its id and head, and the turn taken from linking a transaction's events
 * until that transaction ends, so events are chained in the order they commit.
 */
export interface AuditChainWriter {
  /** The id of the chain being written now. */
  readonly writerId: string;
  /** Waits for the turn, then links `rows` after the head. */
  link(rows: readonly UnlinkedRow[]): Promise<PendingLinks>;
}

/**
 * A writer whose ids come from `newWriterId` (called at the first event, and again after a
 * transaction ended in doubt).
 * @example const writer = createAuditChainWriter(() => ids(clock.now()));
 */
export function createAuditChainWriter(newWriterId: () => string): AuditChainWriter {
  let writerId: string | undefined;
  let seq = 0;
  let head = GENESIS_HASH;
  let turn: Promise<void> = Promise.resolve();
  return {
    get writerId() {
      writerId ??= newWriterId();
      return writerId;
    },
    async link(rows) {
      let release!: () => void;
      const previous = turn;
      turn = new Promise<void>((resolve) => {
        release = resolve;
      });
      await previous;
      writerId ??= newWriterId();
      const id = writerId;
      let prev = head;
      let next = seq;
      const linked = rows.map((row): LinkedRow => {
        next += 1;
        const link = linkedRow(row, id, next, prev);
        link.hash = linkHash(link);
        prev = link.hash;
        return link;
      });
      let ended = false;
      return {
        rows: linked,
        committed() {
          if (ended) return;
          ended = true;
          seq = next;
          head = prev;
          release();
        },
        failed() {
          if (ended) return;
          ended = true;
          writerId = undefined;
          seq = 0;
          head = GENESIS_HASH;
          release();
        },
      };
    },
  };
}

// One object literal of a fixed shape per row: spreading an 18-column row twice cost as much as
// hashing it.
function linkedRow(row: UnlinkedRow, writer: string, seq: number, prev: string): LinkedRow {
  return {
    id: row.id,
    type: row.type,
    occurred_at: row.occurred_at,
    actor_kind: row.actor_kind,
    actor_id: row.actor_id,
    actor_name: row.actor_name,
    user_id: row.user_id,
    client_id: row.client_id,
    address: row.address,
    user_agent: row.user_agent,
    request_id: row.request_id,
    trace_id: row.trace_id,
    outcome: row.outcome,
    details: row.details,
    writer_id: writer,
    seq,
    prev_hash: prev,
    // Set once the rest is hashed.
    hash: '',
  };
}
