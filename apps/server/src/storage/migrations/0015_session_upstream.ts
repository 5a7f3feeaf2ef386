import type { Kysely } from 'kysely';

// A browser sign-in through an external identity provider remembers it on the session, and hands
// it on through the authorization code or the device approval to the grant (whose columns came in
// 0013), so that refreshes of browser grants re-check the person upstream too. The same four
// columns as on grants; all null for a local sign-in.

const TABLES = ['browser_sessions', 'authorization_codes', 'device_authorizations'] as const;

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
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of [...TABLES].reverse()) {
    for (const [column] of [...COLUMNS].reverse()) {
      await db.schema.alterTable(name).dropColumn(column).execute();
    }
  }
}
