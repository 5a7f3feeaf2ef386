import type { Kysely } from 'kysely';

// Brute-force counting by origin: a password grant's attempts name their client (counted per
// client, and per address apart from the browser's), and each failure notes whether its address
// was familiar to the account (smart lockout counts the two apart).
// Same conventions as before: text/bigint/integer flags, epoch-ms instants, no foreign keys.

export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite runs a migration outside a transaction: a column a half-applied run added stays.
  const tables = await db.introspection.getTables();
  const has = (column: string) =>
    tables.some((t) => t.name === 'login_attempts' && t.columns.some((c) => c.name === column));
  if (!has('client_id'))
    await db.schema.alterTable('login_attempts').addColumn('client_id', 'text').execute();
  if (!has('familiar')) {
    await db.schema
      .alterTable('login_attempts')
      .addColumn('familiar', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  }
  await db.schema
    .createIndex('login_attempts_client_id_created_at_idx')
    .ifNotExists()
    .on('login_attempts')
    .columns(['client_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('login_attempts_client_id_created_at_idx').ifExists().execute();
  await db.schema.alterTable('login_attempts').dropColumn('familiar').execute();
  await db.schema.alterTable('login_attempts').dropColumn('client_id').execute();
}
