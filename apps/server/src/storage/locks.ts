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

// An arbitrary, fixed advisory lock id for applying declarations at start.
const DECLARATIONS_LOCK = 0x1d9a7e02;

/**
 * Runs `work` while holding the declarations lock: on PostgreSQL a session advisory lock on a
 * connection of its own (`work` runs its transactions on others), so that replicas starting
 * together apply the declarations one after the other, the later ones finding nothing to do.
 * SQLite has one writer process.
 */
export async function withDeclarationsLock<T>(database: Database, work: () => Promise<T>): Promise<T> {
  if (database.dialect !== 'postgres') return work();
  return database.db.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock(${DECLARATIONS_LOCK})`.execute(connection);
    try {
      return await work();
    } finally {
      await sql`select pg_advisory_unlock(${DECLARATIONS_LOCK})`.execute(connection);
    }
  });
}
