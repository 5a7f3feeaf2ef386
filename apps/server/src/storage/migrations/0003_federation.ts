import { type Kysely, sql } from 'kysely';

// Sign-in through external identity providers: the providers managed at run time, the external
// identities linked to users, and the sign-ins in progress at a provider.
// Same conventions as 0001/0002: text/integer/bigint only, epoch-ms instants, 0/1 flags, JSON text,
// `if not exists` everywhere so a half-applied run on SQLite (no transaction there) can finish,
// and no foreign keys (removing a provider deletes its identities in the application, in one
// transaction; removing a user must stay a single delete).

const isFlag = (column: string) => sql<boolean>`${sql.ref(column)} in (0, 1)`;

const NEW_TABLES = ['login_transactions', 'linked_identities', 'identity_providers'];

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('identity_providers')
    .ifNotExists()
    // Stored lower-cased, so the primary key is what makes names unique regardless of case.
    .addColumn('name', 'text', (c) => c.primaryKey().check(sql<boolean>`name = lower(name)`))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0).check(isFlag('disabled')))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('linked_identities')
    .ifNotExists()
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('groups', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('linked_at', 'bigint', (c) => c.notNull())
    .addColumn('last_login_at', 'bigint')
    // The key's leading column also serves removing a provider's identities.
    .addPrimaryKeyConstraint('linked_identities_pkey', ['provider', 'subject'])
    .execute();
  // `idgate users identities` and the identities of a signed-in user.
  await db.schema
    .createIndex('linked_identities_user_id_idx')
    .ifNotExists()
    .on('linked_identities')
    .column('user_id')
    .execute();

  await db.schema
    .createTable('login_transactions')
    .ifNotExists()
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('binding_hash', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('interaction_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('login_transactions_expires_at_idx')
    .ifNotExists()
    .on('login_transactions')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of NEW_TABLES) await db.schema.dropTable(table).ifExists().execute();
}
