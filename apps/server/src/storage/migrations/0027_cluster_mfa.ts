import { type Kysely, sql } from 'kysely';

// Clusters that require a second factor: a token for one needs the MFA `acr` (0 or 1).

export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite runs a migration outside a transaction: a column a half-applied run added stays.
  const clusters = (await db.introspection.getTables()).find((t) => t.name === 'clusters');
  if (clusters?.columns.some((c) => c.name === 'require_mfa')) return;
  await db.schema
    .alterTable('clusters')
    .addColumn('require_mfa', 'integer', (c) =>
      c.notNull().defaultTo(0).check(sql<boolean>`require_mfa in (0, 1)`),
    )
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clusters').dropColumn('require_mfa').execute();
}
