import type { Kysely } from 'kysely';

// Where an audit event came from, beside its address and user agent: the id of the HTTP request
// that made it and the OpenTelemetry trace id of that request. Nullable: events outside a request
// (the CLI, background jobs) and those older than this have none.
// Same conventions as before: text only; an event's stored fields are never rewritten.

const COLUMNS = ['request_id', 'trace_id'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite runs a migration outside a transaction: a column a half-applied run added stays.
  const tables = await db.introspection.getTables();
  const has = (column: string) =>
    tables.some((t) => t.name === 'audit_events' && t.columns.some((c) => c.name === column));
  for (const column of COLUMNS) {
    if (!has(column)) await db.schema.alterTable('audit_events').addColumn(column, 'text').execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of [...COLUMNS].reverse()) {
    await db.schema.alterTable('audit_events').dropColumn(column).execute();
  }
}
