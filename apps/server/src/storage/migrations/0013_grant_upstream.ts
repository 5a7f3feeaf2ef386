import type { Kysely } from 'kysely';

// Grants from an external identity provider remember it, so a refresh can re-check the person
// upstream: the provider, the subject there, when the upstream last vouched (epoch ms), and the
// connector's upstream tokens sealed with the server secret. All null for other grants.

const COLUMNS = [
  ['upstream_provider', 'text'],
  ['upstream_subject', 'text'],
  ['upstream_validated_at', 'bigint'],
  ['upstream_state', 'text'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite runs a migration outside a transaction: a column a half-applied run added stays.
  const tables = await db.introspection.getTables();
  const grants = tables.find((table) => table.name === 'grants');
  for (const [column, type] of COLUMNS) {
    if (grants?.columns.some((c) => c.name === column)) continue;
    await db.schema.alterTable('grants').addColumn(column, type).execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [column] of [...COLUMNS].reverse()) {
    await db.schema.alterTable('grants').dropColumn(column).execute();
  }
}
