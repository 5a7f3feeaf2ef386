import type { RevocationKind, RevocationRecord, RevocationRepository } from '@idgate/core';
import { sql } from 'kysely';
import { toDate, toMs } from './columns.js';
import { inByteOrder, type RepositoryContext } from './support.js';

export function createRevocationRepository(ctx: RepositoryContext): RevocationRepository {
  const { db } = ctx;
  return {
    async add(entry) {
      // One statement, so two replicas adding the same entry at once cannot lose the later expiry.
      // The later entry wins as a whole (createdAt too), as in the in-memory storage of @idgate/core.
      const later = sql<boolean>`excluded.expires_at > revocations.expires_at`;
      await db
        .insertInto('revocations')
        .values({
          kind: entry.kind,
          value: entry.value,
          expires_at: toMs(entry.expiresAt),
          created_at: toMs(entry.createdAt),
        })
        .onConflict((oc) =>
          oc.columns(['kind', 'value']).doUpdateSet({
            expires_at: sql<number>`case when ${later} then excluded.expires_at else revocations.expires_at end`,
            created_at: sql<number>`case when ${later} then excluded.created_at else revocations.created_at end`,
          }),
        )
        .execute();
    },

    async isRevoked(kind, value, now) {
      const row = await db
        .selectFrom('revocations')
        .select('kind')
        .where('kind', '=', kind)
        .where('value', '=', value)
        .where('expires_at', '>', toMs(now))
        .executeTakeFirst();
      return row !== undefined;
    },

    async listLive(now) {
      const rows = await db
        .selectFrom('revocations')
        .selectAll()
        .where('expires_at', '>', toMs(now))
        .orderBy('kind')
        .orderBy(inByteOrder(ctx, 'value'))
        .execute();
      return rows.map(
        (row): RevocationRecord => ({
          kind: row.kind as RevocationKind,
          value: row.value,
          expiresAt: toDate(row.expires_at),
          createdAt: toDate(row.created_at),
        }),
      );
    },

    async purgeExpired(now) {
      // `<=` so that purging and isRevoked/listLive (`> now`) split the set with nothing in between.
      const result = await db
        .deleteFrom('revocations')
        .where('expires_at', '<=', toMs(now))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
