import type { Kysely } from 'kysely';

// Token exchange (RFC 8693): trusts of external issuers, and the subject-token jtis already spent
// (kept until the subject token expires, then swept). Same conventions as before: text/bigint only,
// epoch-ms instants, JSON text, no foreign keys.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('trusts')
    .ifNotExists()
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('audience', 'text', (c) => c.notNull())
    .addColumn('jwks', 'text')
    .addColumn('discovery_url', 'text')
    .addColumn('condition', 'text')
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('groups', 'text', (c) => c.notNull())
    .addColumn('clusters', 'text', (c) => c.notNull())
    .addColumn('max_ttl', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('subject_token_uses')
    .ifNotExists()
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('subject_token_uses_pkey', ['issuer', 'jti'])
    .execute();
  await db.schema
    .createIndex('subject_token_uses_expires_at')
    .ifNotExists()
    .on('subject_token_uses')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('subject_token_uses').ifExists().execute();
  await db.schema.dropTable('trusts').ifExists().execute();
}
