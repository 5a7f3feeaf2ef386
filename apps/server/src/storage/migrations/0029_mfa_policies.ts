import { type Kysely, sql } from 'kysely';

// Groups and clients that require a second factor (0 or 1), and whether a trusted upstream
// verified the email of a linked identity (0 or 1; 0 for every identity linked before).

const COLUMNS = [
  { table: 'groups', column: 'require_mfa' },
  { table: 'oauth_clients', column: 'require_mfa' },
  { table: 'linked_identities', column: 'email_verified' },
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite runs a migration outside a transaction: a column a half-applied run added stays.
  const tables = await db.introspection.getTables();
  for (const { table, column } of COLUMNS) {
    const found = tables.find((t) => t.name === table);
    if (found?.columns.some((c) => c.name === column)) continue;
    await db.schema
      .alterTable(table)
      .addColumn(column, 'integer', (c) =>
        c
          .notNull()
          .defaultTo(0)
          .check(sql<boolean>`${sql.ref(column)} in (0, 1)`),
      )
      .execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const { table, column } of [...COLUMNS].reverse()) {
    await db.schema.alterTable(table).dropColumn(column).execute();
  }
}
