import type { Kysely } from 'kysely';

// A device's poll is one statement (RFC 8628 §3.5): the update that records it also decides
// whether it came too soon, from the row as it was, and keeps that decision in `poll_slowed`
// (1: this poll was answered slow_down) so the statement can return it; `RETURNING` sees only the
// row as it is after the update, where the previous poll's time is already overwritten.

export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite runs a migration outside a transaction: a column a half-applied run added stays.
  const tables = await db.introspection.getTables();
  const table = tables.find((t) => t.name === 'device_authorizations');
  if (table?.columns.some((c) => c.name === 'poll_slowed')) return;
  await db.schema
    .alterTable('device_authorizations')
    .addColumn('poll_slowed', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('device_authorizations').dropColumn('poll_slowed').execute();
}
