import type { Kysely } from 'kysely';

// Tamper evidence for the audit trail (docs/operating/audit.md, "Verifying the trail"): each event
// is chained to the one its writer (one server or CLI process) stored before it. `writer_id` names
// the writer, `seq` counts its events from 1, `prev_hash` is the hash of event seq-1 (64 zeros for
// seq 1), `hash` the SHA-256 of the row's other columns. Events stored before this migration keep
// nulls: they are reported as unchained, never verified. `audit_chain_anchors` remembers, per
// writer, the seq and hash of the last event the retention purge deleted, so the chain that
// remains starts from a known link (and the cutoff of that purge, for the reader).
// Same conventions as before: text/bigint only, no foreign keys, stored fields never rewritten.

const COLUMNS = [
  ['writer_id', 'text'],
  ['seq', 'bigint'],
  ['prev_hash', 'text'],
  ['hash', 'text'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite runs a migration outside a transaction: what a half-applied run made stays.
  const tables = await db.introspection.getTables();
  const has = (column: string) =>
    tables.some((t) => t.name === 'audit_events' && t.columns.some((c) => c.name === column));
  for (const [column, type] of COLUMNS) {
    if (!has(column)) await db.schema.alterTable('audit_events').addColumn(column, type).execute();
  }
  // One event per link: two events claiming the same place in a writer's chain cannot be stored.
  await db.schema
    .createIndex('audit_events_chain_idx')
    .ifNotExists()
    .unique()
    .on('audit_events')
    .columns(['writer_id', 'seq'])
    .execute();
  await db.schema
    .createTable('audit_chain_anchors')
    .ifNotExists()
    .addColumn('writer_id', 'text', (c) => c.primaryKey())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('purged_before', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_chain_anchors').ifExists().execute();
  await db.schema.dropIndex('audit_events_chain_idx').ifExists().execute();
  for (const [column] of [...COLUMNS].reverse()) {
    await db.schema.alterTable('audit_events').dropColumn(column).execute();
  }
}
