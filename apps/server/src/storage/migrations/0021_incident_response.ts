import type { Kysely } from 'kysely';

// Incident response. `not_before`: Keycloak's not-before, one row per scope and subject (the
// global one with subject ''), instants in ms; tokens, grants, sessions and codes of the scope
// made before `not_before` are refused. Every replica holds the table in memory (a row per user
// or client an administrator named), refreshed through the change log.
// `grants_client_id_idx`: grants listed and revoked per client.
// `login_attempts_username_address_idx`: the latest lift of an address block (an attempt of the
// pseudo-account `address:lifted`) is read beside every count of an address's failures.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('not_before')
    .ifNotExists()
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('not_before', 'bigint', (c) => c.notNull())
    .addColumn('set_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('not_before_pkey', ['scope', 'subject'])
    .execute();
  await db.schema
    .createIndex('grants_client_id_idx')
    .ifNotExists()
    .on('grants')
    .column('client_id')
    .execute();
  await db.schema
    .createIndex('login_attempts_username_address_idx')
    .ifNotExists()
    .on('login_attempts')
    .columns(['username', 'source_address', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('login_attempts_username_address_idx').ifExists().execute();
  await db.schema.dropIndex('grants_client_id_idx').ifExists().execute();
  await db.schema.dropTable('not_before').ifExists().execute();
}
