import { type Kysely, sql } from 'kysely';

// Kubernetes clusters: each has an audience its tokens carry; API keys may be bound to one (the
// binding is kept on the key, name and audience, so a review reads nothing else); authorization
// codes remember the RFC 8707 resources their request named.
// Same conventions as before: text/bigint only, epoch-ms instants, JSON text, no foreign keys
// (removing a cluster revokes its keys in the application, in one transaction).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('clusters')
    .ifNotExists()
    // Stored lower-cased, so the primary key is what makes names unique regardless of case.
    .addColumn('name', 'text', (c) => c.primaryKey().check(sql<boolean>`name = lower(name)`))
    .addColumn('audience', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('clusters_audience_unique')
    .ifNotExists()
    .unique()
    .on('clusters')
    .column('audience')
    .execute();
  // SQLite runs a migration outside a transaction: a column a half-applied run added stays.
  const tables = await db.introspection.getTables();
  const has = (table: string, column: string) =>
    tables.some((t) => t.name === table && t.columns.some((c) => c.name === column));
  for (const [table, column] of [
    ['api_keys', 'cluster_name'],
    ['api_keys', 'cluster_audience'],
    ['authorization_codes', 'resource'],
  ] as const) {
    if (!has(table, column)) await db.schema.alterTable(table).addColumn(column, 'text').execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('authorization_codes').dropColumn('resource').execute();
  await db.schema.alterTable('api_keys').dropColumn('cluster_audience').execute();
  await db.schema.alterTable('api_keys').dropColumn('cluster_name').execute();
  await db.schema.dropTable('clusters').ifExists().execute();
}
