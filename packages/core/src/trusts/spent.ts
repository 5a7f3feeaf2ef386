import type { AuditEvent } from '@idgate/schema';
import { groupCommit } from '../internal/group-commit.js';
import type { SubjectTokenUseRecord } from '../model.js';
import type { AuditEventRepository } from '../ports/audit-storage.js';
import type { SubjectTokenUseRepository } from '../ports/storage.js';

/**
 * Spends a subject token's `jti` and stores the exchange's audit event in the same transaction:
 * `events(true)` when the `jti` was fresh (now spent), `events(false)` when it was spent already.
 * Resolves with whether it was fresh, once both are committed; rejects (nothing spent, nothing
 * recorded) when the transaction could not be written.
 * @example const fresh = await spend(use, now, (spent) => completeAuditEvents([spent ? issued : replayed], clock));
 */
export type SpendAndRecord = (
  use: SubjectTokenUseRecord,
  now: Date,
  events: (fresh: boolean) => readonly AuditEvent[],
) => Promise<boolean>;

/** The repositories a spend writes through, inside its transaction. */
interface SpendTransaction {
  subjectTokenUses: Pick<SubjectTokenUseRepository, 'spend'>;
  auditEvents: Pick<AuditEventRepository, 'append'>;
}

/** What {@link spendAndRecord} and {@link groupSpends} write through: a transaction over both. */
export interface SpendBatchStorage {
  transaction<T>(work: (storage: SpendTransaction) => Promise<T>): Promise<T>;
}

interface Spend {
  use: SubjectTokenUseRecord;
  now: Date;
  events: (fresh: boolean) => readonly AuditEvent[];
}

async function spendAll(tx: SpendTransaction, items: readonly Spend[]): Promise<boolean[]> {
  const fresh: boolean[] = [];
  const events: AuditEvent[] = [];
  for (const { use, now, events: of } of items) {
    const spent = await tx.subjectTokenUses.spend(use, now);
    fresh.push(spent);
    events.push(...of(spent));
  }
  await tx.auditEvents.append(events);
  return fresh;
}

/**
 * {@link SpendAndRecord} as one transaction per call.
 * @example const fresh = await spendAndRecord(storage)(use, now, (spent) => events(spent));
 */
export function spendAndRecord(storage: SpendBatchStorage): SpendAndRecord {
  return async (use, now, events) =>
    (await storage.transaction((tx) => spendAll(tx, [{ use, now, events }])))[0] === true;
}

/**
 * {@link SpendAndRecord} with group commit: concurrent exchanges' spends and events go in one
 * transaction (one commit: one WAL write on SQLite, one fsync on PostgreSQL), each still answered
 * on its own — a `jti` spent twice in one batch is spent by the first only. Measured: a commit per
 * exchange cost as much system CPU as the rest of the exchange, and a transaction for the spend
 * beside the audit batcher's for the event 26 µs per exchange (bench/README.md).
 * @example const spend = groupSpends(storage); await spend(use, now, (fresh) => events(fresh));
 */
export function groupSpends(
  storage: SpendBatchStorage,
  options: { maxBatch?: number; schedule?: ((run: () => void) => void) | undefined } = {},
): SpendAndRecord {
  const submit = groupCommit<Spend, boolean>((items) => storage.transaction((tx) => spendAll(tx, items)), {
    maxBatch: options.maxBatch ?? 200,
    schedule: options.schedule,
  });
  return async (use, now, events) => (await submit([{ use, now, events }]))[0] === true;
}
