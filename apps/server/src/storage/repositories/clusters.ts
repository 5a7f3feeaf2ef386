import type { ClusterRecord, ClusterRepository } from '@idgate/core';
import type { Selectable } from 'kysely';
import type { ClustersTable } from '../schema.js';
import { fromFlag, toDate, toFlag, toMs } from './columns.js';
import {
  deleteRows,
  findRecord,
  inByteOrder,
  insertRecordReturning,
  insertUnique,
  type RepositoryContext,
  type UniqueTable,
  updateRecord,
} from './support.js';

const CLUSTERS: UniqueTable<'clusters', ClusterRecord> = {
  name: 'clusters',
  toRecord: toCluster,
  conflicts: {
    clusters_pkey: 'name',
    'clusters.name': 'name',
    clusters_audience_unique: 'audience',
    'clusters.audience': 'audience',
  },
  conflictField: 'name',
};

export function createClusterRepository(ctx: RepositoryContext): ClusterRepository {
  const { db } = ctx;
  const fold = (name: string) => name.toLowerCase();
  return {
    async create(cluster) {
      return insertRecordReturning(ctx, CLUSTERS, {
        name: fold(cluster.name),
        audience: cluster.audience,
        require_mfa: toFlag(cluster.requireMfa),
        created_at: toMs(cluster.createdAt),
      });
    },

    async findByName(name) {
      return findRecord(db, CLUSTERS, 'name', fold(name));
    },

    async list() {
      const rows = await db.selectFrom('clusters').selectAll().orderBy(inByteOrder(ctx, 'name')).execute();
      return rows.map(toCluster);
    },

    async update(name, changes) {
      const set = {
        ...(changes.name === undefined ? {} : { name: fold(changes.name) }),
        ...(changes.audience === undefined ? {} : { audience: changes.audience }),
        ...(changes.requireMfa === undefined ? {} : { require_mfa: toFlag(changes.requireMfa) }),
      };
      if (Object.keys(set).length === 0) return findRecord(db, CLUSTERS, 'name', fold(name));
      return insertUnique(ctx, CLUSTERS.conflicts, CLUSTERS.conflictField, () =>
        updateRecord(db, CLUSTERS, 'name', fold(name), set),
      );
    },

    async remove(name) {
      return (await deleteRows(db, CLUSTERS, 'name', fold(name))) > 0;
    },
  };
}

function toCluster(row: Selectable<ClustersTable>): ClusterRecord {
  return {
    name: row.name,
    audience: row.audience,
    requireMfa: fromFlag(row.require_mfa),
    createdAt: toDate(row.created_at),
  };
}
