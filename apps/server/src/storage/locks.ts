import { sql } from 'kysely';
import type { Database } from './database.js';
import type { SqlStorage } from './sql-storage.js';

// An arbitrary, fixed advisory lock id for signing-key management.
const SIGNING_KEYS_LOCK = 0x1d9a7e01;

/**
 * Runs `work` in one transaction that holds the signing-key lock: on PostgreSQL a transaction
 * advisory lock, so that replicas starting together create one first key and concurrent
 * rotations run one after the other; SQLite serialises writers anyway.
 */
export function withSigningKeyLock<T>(
  storage: SqlStorage,
  database: Database,
  work: (tx: SqlStorage) => Promise<T>,
): Promise<T> {
  return storage.transaction(async (tx) => {
    if (database.dialect === 'postgres')
      await sql`select pg_advisory_xact_lock(${SIGNING_KEYS_LOCK})`.execute(tx.db);
    return work(tx);
  });
}
