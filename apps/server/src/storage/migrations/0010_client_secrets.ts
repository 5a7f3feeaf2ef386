import type { Kysely } from 'kysely';

// Client secret rotation with a grace period: the hash of the secret a rotation replaced and
// until when it is still accepted (epoch ms). API keys may expire (epoch ms, null: never).
// A keyset listing of clients reads them by (created_at, client_id).

export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite runs a migration outside a transaction: a column a half-applied run added stays.
  const tables = await db.introspection.getTables();
  const has = (table: string, column: string) =>
    tables.some((t) => t.name === table && t.columns.some((c) => c.name === column));
  for (const [table, column, type] of [
    ['oauth_clients', 'previous_secret_hash', 'text'],
    ['oauth_clients', 'previous_secret_expires_at', 'bigint'],
    ['api_keys', 'expires_at', 'bigint'],
  ] as const) {
    if (!has(table, column)) await db.schema.alterTable(table).addColumn(column, type).execute();
  }
  await db.schema
    .createIndex('oauth_clients_created_at_client_id')
    .ifNotExists()
    .on('oauth_clients')
    .columns(['created_at', 'client_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('oauth_clients_created_at_client_id').ifExists().execute();
  await db.schema.alterTable('api_keys').dropColumn('expires_at').execute();
  await db.schema.alterTable('oauth_clients').dropColumn('previous_secret_expires_at').execute();
  await db.schema.alterTable('oauth_clients').dropColumn('previous_secret_hash').execute();
}
