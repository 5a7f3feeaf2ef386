import type { Database as BetterSqlite, Statement } from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

/** How many prepared statements a SQLite connection keeps by default. */
export const STATEMENT_CACHE_SIZE = 256;

/**
 * The SQLite connection as Kysely's dialect takes it, keeping each prepared statement for the next
 * query of the same SQL text. Kysely prepares every query it runs, and preparing (SQLite parsing
 * and planning the text) cost a tenth of a refresh-token rotation's CPU: the texts repeat (values
 * are bound, never inlined), so a statement is prepared once and reused. The least recently used
 * statement goes when more than `max` texts are held (lists of varying length make new texts). A
 * statement still being iterated (a streamed query) is never handed out again: the query gets a
 * fresh one. SQLite re-prepares a cached statement itself when a migration changes the schema.
 * @example new SqliteDialect({ database: cachingStatements(new SqliteDatabase(file)) });
 */
export function cachingStatements(sqlite: BetterSqlite, max = STATEMENT_CACHE_SIZE): SqliteDatabase {
  const statements = new Map<string, Statement>();
  return {
    prepare(sql) {
      const cached = statements.get(sql);
      if (cached !== undefined) {
        if (cached.busy) return sqlite.prepare(sql);
        // Map order is insertion order: moving a hit to the end keeps the least recently used first.
        statements.delete(sql);
        statements.set(sql, cached);
        return cached;
      }
      const statement = sqlite.prepare(sql);
      statements.set(sql, statement);
      if (statements.size > max) {
        const oldest = statements.keys().next().value;
        if (oldest !== undefined) statements.delete(oldest);
      }
      return statement;
    },
    close() {
      statements.clear();
      sqlite.close();
    },
  };
}
