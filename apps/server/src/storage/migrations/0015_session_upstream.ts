import type { Kysely } from 'kysely';

// A browser sign-in through an external identity provider remembers it on the session, and hands
// it on through the authorization code or the device approval to the grant (whose columns came in
// 0013), so that refreshes of browser grants re-check the person upstream too. The same four
// columns as on grants; all null for a local sign-in. When the upstream rotates the token of one
// sign-in, every grant and session holding it is updated: found by the identity, hence the indexes.

const TABLES = ['browser_sessions', 'authorization_codes', 'device_authorizations'] as const;

/** Index name → table: the rows of one upstream identity. */
const INDEXES = {
  grants_upstream_idx: 'grants',
  browser_sessions_upstream_idx: 'browser_sessions',
} as const;

const COLUMNS = [
  ['upstream_provider', 'text'],
  ['upstream_subject', 'text'],
  ['upstream_validated_at', 'bigint'],
  ['upstream_state', 'text'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite runs a migration outside a transaction: a column a half-applied run added stays.
  const tables = await db.introspection.getTables();
  for (const name of TABLES) {
    const table = tables.find((t) => t.name === name);
    for (const [column, type] of COLUMNS) {
      if (table?.columns.some((c) => c.name === column)) continue;
      await db.schema.alterTable(name).addColumn(column, type).execute();
    }
  }
  for (const [index, table] of Object.entries(INDEXES)) {
    await db.schema
      .createIndex(index)
      .ifNotExists()
      .on(table)
      .columns(['upstream_provider', 'upstream_subject'])
      .execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const index of Object.keys(INDEXES)) await db.schema.dropIndex(index).ifExists().execute();
  for (const name of [...TABLES].reverse()) {
    for (const [column] of [...COLUMNS].reverse()) {
      await db.schema.alterTable(name).dropColumn(column).execute();
    }
  }
}
