import type { Kysely } from 'kysely';

// RFC 8707: a grant records the resources (cluster audiences, APIs) the person approved at
// sign-in, and a remembered consent the resources consented to; each a JSON array of strings.
// Null for rows from before: such a grant is refreshed only without `resource`, and such a
// consent covers no resource (the next request that names one asks again).

const COLUMNS = [
  ['grants', 'resources'],
  ['consents', 'resources'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite runs a migration outside a transaction: a column a half-applied run added stays.
  const tables = await db.introspection.getTables();
  for (const [table, column] of COLUMNS) {
    if (tables.find((t) => t.name === table)?.columns.some((c) => c.name === column)) continue;
    await db.schema.alterTable(table).addColumn(column, 'text').execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [table, column] of [...COLUMNS].reverse()) {
    await db.schema.alterTable(table).dropColumn(column).execute();
  }
}
