import type { Kysely } from 'kysely';

// Declarations (`idgate apply`, the file read at start). `declared_objects`: which manager owns
// which object, and a hash of the object as last applied (drift shows as a different hash of the
// object now); `secrets` hashes secrets that storage keeps sealed. Instants in ms.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('declared_objects')
    .ifNotExists()
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('object_id', 'text', (c) => c.notNull())
    .addColumn('manager', 'text', (c) => c.notNull())
    .addColumn('secrets', 'text')
    .addColumn('applied_hash', 'text', (c) => c.notNull())
    .addColumn('applied_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('declared_objects_pkey', ['kind', 'name'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('declared_objects').ifExists().execute();
}
