import { type Kysely, PostgresAdapter } from 'kysely';

// The change log replicas read to keep their in-memory state (revocations, users, clients, API
// keys, keys, identity providers) in step with writes made by any other process. Rows are purged
// once every server has had time to read them. Same conventions as before: `if not exists`, no
// foreign keys, epoch-ms instants. The id is the only dialect-specific column.

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('change_log')
    .ifNotExists()
    .addColumn('id', postgres ? 'bigserial' : 'integer', (c) =>
      postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('change_log_created_at')
    .ifNotExists()
    .on('change_log')
    .column('created_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('change_log').ifExists().execute();
}
