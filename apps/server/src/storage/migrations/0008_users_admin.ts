import type { Kysely } from 'kysely';

// The admin API of users: deleting a user ends its browser sessions, found by user id.
// Same conventions as before; `if not exists` so a half-applied run on SQLite can finish.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('browser_sessions_user_id_idx')
    .ifNotExists()
    .on('browser_sessions')
    .column('user_id')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('browser_sessions_user_id_idx').ifExists().execute();
}
