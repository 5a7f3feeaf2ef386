import type { Kysely } from 'kysely';

// Passkeys and security keys (WebAuthn). A credential is a row of `factors` (0024 made room for
// it): `kind` `webauthn`, `credential_id` its id (unique: a passkey sign-in finds its user by it),
// `secret` its COSE public key (base64url; public, so not sealed), `counter` its signature counter.
// This adds `factors.transports` (JSON array of the transports the authenticator reported, handed
// back to the browser so it knows where to look) and `webauthn_challenges`: a challenge handed to
// a browser, by the SHA-256 of its value, bound to the interaction (and user) it was issued for,
// taken (deleted) by its first use, expired ones dropped when new ones are stored.

export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite runs a migration outside a transaction: a column a half-applied run added stays.
  const factors = (await db.introspection.getTables()).find((t) => t.name === 'factors');
  if (!factors?.columns.some((c) => c.name === 'transports'))
    await db.schema.alterTable('factors').addColumn('transports', 'text').execute();
  await db.schema
    .createTable('webauthn_challenges')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('interaction_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webauthn_challenges_expires_at')
    .ifNotExists()
    .on('webauthn_challenges')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webauthn_challenges').ifExists().execute();
  await db.schema.alterTable('factors').dropColumn('transports').execute();
}
