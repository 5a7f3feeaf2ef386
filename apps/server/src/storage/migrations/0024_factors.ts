import type { Kysely } from 'kysely';

// Second factors. `factors`: one row per enrolled (or enrolling) factor of a user, named; `kind`
// says how to read it — `totp` now, WebAuthn credentials later, which will use `credential_id`
// (unique: a passkey sign-in finds its user by it) and `counter` as the signature counter.
// `secret` is sealed with the server secret (AES-256-GCM, see sealText); `counter` is a TOTP
// factor's last accepted time step, the replay guard. `recovery_codes`: SHA-256 of each code of
// the user's current set, `used_at` set once. `mfa_requirements`: users an administrator requires
// a second factor of. `amr` (JSON array of RFC 8176 values) on every record a sign-in flows
// through, so the tokens in the end say how the person authenticated; null before this migration
// (read as a password-only or upstream sign-in). `interactions.pending_user_id`: a user whose
// password was right and who owes a second factor before the sign-in goes on; `pending_upstream`
// the LDAP identity that password was checked at, for the session the second factor opens.

const AMR_TABLES = [
  'browser_sessions',
  'interactions',
  'authorization_codes',
  'grants',
  'device_authorizations',
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('factors')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('credential_id', 'text')
    .addColumn('counter', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('confirmed_at', 'bigint')
    .addColumn('last_used_at', 'bigint')
    .addUniqueConstraint('factors_user_name_unique', ['user_id', 'name'])
    .addUniqueConstraint('factors_credential_id_unique', ['credential_id'])
    .execute();
  await db.schema
    .createTable('recovery_codes')
    .ifNotExists()
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addPrimaryKeyConstraint('recovery_codes_pkey', ['user_id', 'hash'])
    .execute();
  await db.schema
    .createTable('mfa_requirements')
    .ifNotExists()
    .addColumn('user_id', 'text', (c) => c.primaryKey())
    .addColumn('required_at', 'bigint', (c) => c.notNull())
    .execute();
  // SQLite runs a migration outside a transaction: a column a half-applied run added stays.
  const tables = await db.introspection.getTables();
  for (const name of AMR_TABLES) {
    const table = tables.find((t) => t.name === name);
    if (table?.columns.some((c) => c.name === 'amr')) continue;
    await db.schema.alterTable(name).addColumn('amr', 'text').execute();
  }
  const interactions = tables.find((t) => t.name === 'interactions');
  for (const column of ['pending_user_id', 'pending_upstream'])
    if (!interactions?.columns.some((c) => c.name === column))
      await db.schema.alterTable('interactions').addColumn(column, 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('interactions').dropColumn('pending_upstream').execute();
  await db.schema.alterTable('interactions').dropColumn('pending_user_id').execute();
  for (const name of AMR_TABLES) await db.schema.alterTable(name).dropColumn('amr').execute();
  await db.schema.dropTable('mfa_requirements').ifExists().execute();
  await db.schema.dropTable('recovery_codes').ifExists().execute();
  await db.schema.dropTable('factors').ifExists().execute();
}
