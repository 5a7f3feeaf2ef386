import { type Kysely, sql } from 'kysely';

// RFC 8628 device authorization requests. Same conventions as 0002: text/integer/bigint only,
// epoch-ms instants, JSON text, no foreign keys, `if not exists` so a half-applied run on SQLite
// (no transaction there) can finish. The device code is stored only as its hash (the key); the
// user code is unique outright, and a new request takes over the row of an expired one holding
// the same code (the repository deletes it first), so "unique among live requests" holds without
// a time-dependent index.

const STATUSES = sql`status in ('pending', 'approved', 'denied', 'consumed')`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('device_authorizations')
    .ifNotExists()
    .addColumn('device_code_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_code', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('resource', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(STATUSES))
    .addColumn('user_id', 'text')
    .addColumn('auth_time', 'bigint')
    .addColumn('session_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('last_polled_at', 'bigint')
    .addColumn('interval', 'integer', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('device_authorizations_user_code_unique')
    .ifNotExists()
    .unique()
    .on('device_authorizations')
    .column('user_code')
    .execute();
  await db.schema
    .createIndex('device_authorizations_expires_at_idx')
    .ifNotExists()
    .on('device_authorizations')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('device_authorizations').ifExists().execute();
}
