import type { ClusterRecord, ClusterRepository } from '@idgate/core';
import { type Selectable, sql } from 'kysely';
import type { ClustersTable } from '../schema.js';
import { toDate, toMs } from './columns.js';
import { type ConflictFields, insertRowReturning, type RepositoryContext } from './support.js';

const CONFLICTS: ConflictFields = {
  clusters_pkey: 'name',
  'clusters.name': 'name',
  clusters_audience_unique: 'audience',
  'clusters.audience': 'audience',
};

export function createClusterRepository(ctx: RepositoryContext): ClusterRepository {
  const { db } = ctx;
  const fold = (name: string) => name.toLowerCase();
  // Byte order in PostgreSQL too, whatever the database's collation, so both dialects list alike.
  const byName = ctx.dialect === 'postgres' ? sql`name collate "C"` : sql`name`;
  return {
    async create(cluster) {
      const row = await insertRowReturning(ctx, 'clusters', CONFLICTS, 'name', {
        name: fold(cluster.name),
        audience: cluster.audience,
        created_at: toMs(cluster.createdAt),
      });
      return toCluster(row);
    },

    async findByName(name) {
      const row = await db
        .selectFrom('clusters')
        .selectAll()
        .where('name', '=', fold(name))
        .executeTakeFirst();
      return row && toCluster(row);
    },

    async list() {
      const rows = await db.selectFrom('clusters').selectAll().orderBy(byName).execute();
      return rows.map(toCluster);
    },

    async remove(name) {
      const result = await db.deleteFrom('clusters').where('name', '=', fold(name)).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}

function toCluster(row: Selectable<ClustersTable>): ClusterRecord {
  return { name: row.name, audience: row.audience, createdAt: toDate(row.created_at) };
}
