import { type PurgedRecords, purgeAuditEvents, purgeExpiredRecords } from '@idgate/core';
import { sql } from 'kysely';
import type { Services } from './services.js';

// An arbitrary, fixed advisory lock id: one replica purges at a time.
const PURGE_LOCK = 0x1d9a7e02;

/** The periodic purge of expired records, started with the server's context. */
export interface PurgeJob {
  /** Purges now; undefined when another replica was purging. */
  run(): Promise<PurgedRecords | undefined>;
  stop(): void;
}

/**
 * Every `intervalSeconds` (the first time after a random part of it, so that replicas started
 * together spread out), deletes what has expired ({@link purgeExpiredRecords}) in one transaction.
 * On PostgreSQL the transaction takes an advisory lock first and skips the round when another
 * replica holds it. `report` hears what was deleted, or why a round failed (a database that is
 * down: the next round tries again).
 */
// Audit events deleted per statement when their retention has passed.
const AUDIT_PURGE_BATCH = 1000;

export function startPurgeJob(
  services: Pick<Services, 'storage' | 'database' | 'clock'>,
  intervalSeconds: number,
  report: { purged(counts: PurgedRecords): void; failed(error: unknown): void },
  /** Seconds audit events are kept (`audit.retention`); 0 keeps them all. */
  auditRetentionSeconds = 0,
): PurgeJob {
  const { storage, database, clock } = services;
  const run = async () => {
    const counts = await purgeExpired();
    if (counts === undefined || auditRetentionSeconds <= 0) return counts;
    // Outside the transaction above: each batch commits on its own, and concurrent replicas
    // deleting the same old rows do no harm.
    const cutoff = new Date(clock.now() - auditRetentionSeconds * 1000);
    return { ...counts, auditEvents: await purgeAuditEvents(storage, cutoff, AUDIT_PURGE_BATCH) };
  };
  const purgeExpired = () =>
    storage.transaction(async (tx) => {
      if (database.dialect === 'postgres') {
        const { rows } = await sql<{
          locked: boolean;
        }>`select pg_try_advisory_xact_lock(${PURGE_LOCK}) as locked`.execute(tx.db);
        if (rows[0]?.locked !== true) return undefined;
      }
      return purgeExpiredRecords(tx, new Date(clock.now()));
    });
  let timer: NodeJS.Timeout | undefined;
  const schedule = (ms: number) => {
    timer = setTimeout(async () => {
      try {
        const counts = await run();
        if (counts !== undefined && Object.values(counts).some((n) => n > 0)) report.purged(counts);
      } catch (error) {
        report.failed(error);
      }
      schedule(intervalSeconds * 1000);
    }, ms);
    timer.unref();
  };
  if (intervalSeconds > 0) schedule(Math.floor(Math.random() * intervalSeconds * 1000));
  return {
    run,
    stop: () => clearTimeout(timer),
  };
}
