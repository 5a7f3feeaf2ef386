import { type Kysely, sql } from 'kysely';

// The tables of the browser flows: grants, authorization codes, refresh tokens, browser sessions,
// consents, pending interactions and login attempts; and clients' post-logout redirect URIs.
// Same conventions as 0001: text/integer/bigint only, epoch-ms instants, 0/1 flags, JSON text,
// `if not exists` everywhere so a half-applied run on SQLite (no transaction there) can finish.
//
// No foreign keys, on purpose: removing a client or user must stay a single delete (SQLite
// enforces foreign keys, so they would block it or cascade silently), and rows here are revoked,
// expired and purged by the application, not by the database. Indexes serve the lookups instead.

const isFlag = (column: string) => sql<boolean>`${sql.ref(column)} in (0, 1)`;

const NEW_TABLES = [
  'login_attempts',
  'interactions',
  'consents',
  'browser_sessions',
  'refresh_tokens',
  'authorization_codes',
  'grants',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await addPostLogoutRedirectUris(db);

  await db.schema
    .createTable('grants')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('auth_time', 'bigint', (c) => c.notNull())
    .addColumn('session_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  // revokeBySession (logout) and revokeByUser.
  await index(db, 'grants', 'grants_session_id_idx', ['session_id']);
  await index(db, 'grants', 'grants_user_id_idx', ['user_id']);

  await db.schema
    .createTable('authorization_codes')
    .ifNotExists()
    .addColumn('hash', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text')
    .addColumn('code_challenge', 'text')
    .addColumn('code_challenge_method', 'text')
    .addColumn('auth_time', 'bigint', (c) => c.notNull())
    .addColumn('session_id', 'text')
    .addColumn('grant_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .execute();
  await index(db, 'authorization_codes', 'authorization_codes_expires_at_idx', ['expires_at']);

  await db.schema
    .createTable('refresh_tokens')
    .ifNotExists()
    .addColumn('hash', 'text', (c) => c.primaryKey())
    .addColumn('grant_id', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await index(db, 'refresh_tokens', 'refresh_tokens_expires_at_idx', ['expires_at']);
  // Not queried yet, but revoking a grant is the natural next step to reach its tokens.
  await index(db, 'refresh_tokens', 'refresh_tokens_grant_id_idx', ['grant_id']);

  await db.schema
    .createTable('browser_sessions')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('auth_time', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .execute();
  // A named unique index, so both dialects report the same name on a collision.
  await db.schema
    .createIndex('browser_sessions_secret_hash_unique')
    .ifNotExists()
    .on('browser_sessions')
    .unique()
    .column('secret_hash')
    .execute();

  await db.schema
    .createTable('consents')
    .ifNotExists()
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('granted_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('consents_pkey', ['user_id', 'client_id'])
    .execute();

  await db.schema
    .createTable('interactions')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('auth_time', 'bigint')
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await index(db, 'interactions', 'interactions_expires_at_idx', ['expires_at']);

  await db.schema
    .createTable('login_attempts')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('source_address', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('success', 'integer', (c) => c.notNull().check(isFlag('success')))
    .addColumn('reason', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  // Brute-force counting and `idgate users logins` range over a username or an address by time.
  await index(db, 'login_attempts', 'login_attempts_username_created_at_idx', ['username', 'created_at']);
  await index(db, 'login_attempts', 'login_attempts_source_address_created_at_idx', [
    'source_address',
    'created_at',
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of NEW_TABLES) await db.schema.dropTable(table).ifExists().execute();
  await db.schema.alterTable('oauth_clients').dropColumn('post_logout_redirect_uris').execute();
}

async function index(db: Kysely<unknown>, table: string, name: string, columns: string[]): Promise<void> {
  await db.schema.createIndex(name).ifNotExists().on(table).columns(columns).execute();
}

/**
 * SQLite has no `add column if not exists`, and runs this migration outside a transaction: look
 * first. Only SQLite tables are considered (they have no schema): PostgreSQL runs the migration in a
 * transaction, so there the column cannot be half there, and a table of the same name in another
 * schema on a shared server must not make us skip it.
 */
async function addPostLogoutRedirectUris(db: Kysely<unknown>): Promise<void> {
  const tables = await db.introspection.getTables();
  const sqliteClients = tables.find((t) => t.name === 'oauth_clients' && t.schema === undefined);
  if (sqliteClients?.columns.some((c) => c.name === 'post_logout_redirect_uris')) return;
  await db.schema
    .alterTable('oauth_clients')
    .addColumn('post_logout_redirect_uris', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
}
