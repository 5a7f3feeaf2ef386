import type { Kysely } from 'kysely';

// The audit trail: one row per security event, appended in the transaction of the change it
// records. The envelope's filterable fields are columns; `details` is the type's JSON object.
// Listed oldest first by (occurred_at, id); filtered by user and by type within that order.
// Same conventions as before: text/bigint only, epoch-ms instants, JSON text, no foreign keys
// (an event outlives the user, client or key it names).

const INDEXES = [
  ['audit_events_occurred_idx', ['occurred_at', 'id']],
  ['audit_events_type_occurred_idx', ['type', 'occurred_at', 'id']],
  ['audit_events_user_occurred_idx', ['user_id', 'occurred_at', 'id']],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_events')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .addColumn('actor_kind', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('actor_name', 'text')
    .addColumn('user_id', 'text')
    .addColumn('client_id', 'text')
    .addColumn('address', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('details', 'text', (c) => c.notNull())
    .execute();
  for (const [name, columns] of INDEXES) {
    await db.schema
      .createIndex(name)
      .ifNotExists()
      .on('audit_events')
      .columns([...columns])
      .execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [name] of INDEXES) await db.schema.dropIndex(name).ifExists().execute();
  await db.schema.dropTable('audit_events').ifExists().execute();
}
