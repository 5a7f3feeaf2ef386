import { type Kysely, sql } from 'kysely';

// Federated sign-in links an identity to the user with its verified email: an index on the folded
// email keeps that one lookup, not a scan of every user. Not unique: two accounts may share an
// address (the lookup then links neither).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('users_email_lower')
    .ifNotExists()
    .on('users')
    .expression(sql`lower(email)`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('users_email_lower').ifExists().execute();
}
