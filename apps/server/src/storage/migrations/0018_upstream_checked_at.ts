import { type Kysely, sql } from 'kysely';

// Re-validation keeps two times of an upstream identity apart: when the upstream last vouched for
// the person (`upstream_validated_at`, the sign-in then each answered re-check; a grant unconfirmed
// for longer than `federation.revalidateMaxStaleness` is revoked) and when a refresh last claimed a
// re-check, answered or not (`upstream_checked_at`: the next is due an interval after it, and the
// compare-and-set of concurrent refreshes is on it). Before, one column held the claim. On every
// table that carries an upstream identity (0013, 0015); rows that have one start with the time
// they hold.

const TABLES = ['grants', 'browser_sessions', 'authorization_codes', 'device_authorizations'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite runs a migration outside a transaction: a column a half-applied run added stays.
  const tables = await db.introspection.getTables();
  for (const name of TABLES) {
    const table = tables.find((t) => t.name === name);
    if (!table?.columns.some((c) => c.name === 'upstream_checked_at'))
      await db.schema.alterTable(name).addColumn('upstream_checked_at', 'bigint').execute();
    await sql`update ${sql.table(name)} set upstream_checked_at = upstream_validated_at
      where upstream_checked_at is null and upstream_validated_at is not null`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of [...TABLES].reverse())
    await db.schema.alterTable(name).dropColumn('upstream_checked_at').execute();
}
