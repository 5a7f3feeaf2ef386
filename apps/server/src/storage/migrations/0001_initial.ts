import { type Kysely, sql } from 'kysely';

// Column types are the ones both SQLite and PostgreSQL understand alike: text, integer, bigint.
// A migration is frozen once released: it must not import the current table interfaces.
// Kysely runs SQLite migrations outside a transaction, so a crash can leave this one half applied;
// `if not exists` lets the next start finish it.

const isFlag = (column: string) => sql<boolean>`${sql.ref(column)} in (0, 1)`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('display_name', 'text')
    .addColumn('groups', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('password_hash', 'text')
    .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0).check(isFlag('disabled')))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // lower() folds ASCII only in SQLite; usernames are ASCII by schema, so both dialects agree.
  await db.schema
    .createIndex('users_username_lower_unique')
    .ifNotExists()
    .on('users')
    .unique()
    .expression(sql`lower(username)`)
    .execute();

  await db.schema
    .createTable('oauth_clients')
    .ifNotExists()
    .addColumn('client_id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text')
    .addColumn('is_public', 'integer', (c) => c.notNull().check(isFlag('is_public')))
    .addColumn('trusted', 'integer', (c) => c.notNull().check(isFlag('trusted')))
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('grant_types', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('audiences', 'text', (c) => c.notNull())
    .addColumn('access_token_ttl', 'integer', (c) => c.notNull())
    .addColumn('refresh_token_ttl', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  // A named index (not a column constraint) so both dialects report the same name on a collision.
  await db.schema
    .createIndex('api_keys_prefix_unique')
    .ifNotExists()
    .on('api_keys')
    .unique()
    .column('prefix')
    .execute();

  await db.schema
    .createTable('signing_keys')
    .ifNotExists()
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('alg', 'text', (c) => c.notNull())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('sealed_private_jwk', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('retired_at', 'bigint')
    .addColumn('published_until', 'bigint')
    .execute();

  await db.schema
    .createTable('revocations')
    .ifNotExists()
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('revocations_pkey', ['kind', 'value'])
    .execute();
  // purgeExpired and listLive range over expires_at.
  await db.schema
    .createIndex('revocations_expires_at_idx')
    .ifNotExists()
    .on('revocations')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['revocations', 'signing_keys', 'api_keys', 'oauth_clients', 'users']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
