import type { Kysely } from 'kysely';

// What the admin API shows of a user's sessions and grants: where a browser signed in from and
// with what user agent; when a grant was last used (its opening, then each refresh) and from
// which address. Indexes for listing them per user in (created_at, id) order, a page at a time.
// Same conventions as before: text/bigint only, epoch-ms instants, nullable for rows older than this.

const COLUMNS = [
  ['browser_sessions', 'source_address', 'text'],
  ['browser_sessions', 'user_agent', 'text'],
  ['grants', 'last_used_at', 'bigint'],
  ['grants', 'last_used_address', 'text'],
] as const;

const INDEXES = [
  ['browser_sessions', 'browser_sessions_user_created_idx'],
  ['grants', 'grants_user_created_idx'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite runs a migration outside a transaction: a column a half-applied run added stays.
  const tables = await db.introspection.getTables();
  const has = (table: string, column: string) =>
    tables.some((t) => t.name === table && t.columns.some((c) => c.name === column));
  for (const [table, column, type] of COLUMNS) {
    if (!has(table, column)) await db.schema.alterTable(table).addColumn(column, type).execute();
  }
  for (const [table, name] of INDEXES) {
    await db.schema
      .createIndex(name)
      .ifNotExists()
      .on(table)
      .columns(['user_id', 'created_at', 'id'])
      .execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [, name] of INDEXES) await db.schema.dropIndex(name).ifExists().execute();
  for (const [table, column] of [...COLUMNS].reverse()) {
    await db.schema.alterTable(table).dropColumn(column).execute();
  }
}
