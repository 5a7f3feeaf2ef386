import type { Storage } from '@idgate/core';
import { type Kysely, sql } from 'kysely';
import type { Database } from './database.js';
import type { Schema } from './schema.js';

// An arbitrary, fixed advisory lock id for signing-key management.
const SIGNING_KEYS_LOCK = 0x1d9a7e01;

/**
 * Runs `work` in one transaction that holds the signing-key lock: on PostgreSQL a transaction
 * advisory lock, so that replicas starting together create one first key and concurrent
 * rotations run one after the other; SQLite serialises writers anyway.
 */
export function withSigningKeyLock<T>(
  storage: Storage,
  database: Database,
  work: (tx: Storage) => Promise<T>,
): Promise<T> {
  return storage.transaction(async (tx) => {
    if (database.dialect === 'postgres') {
      const db = (tx as unknown as Record<symbol, Kysely<Schema> | undefined>)[
        Symbol.for('idgate.storage.db')
      ];
      if (db === undefined) throw new Error('the transaction storage does not expose its connection');
      await sql`select pg_advisory_xact_lock(${SIGNING_KEYS_LOCK})`.execute(db);
    }
    return work(tx);
  });
}
