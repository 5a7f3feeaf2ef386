import type { ApiKeyRecord, ApiKeyRepository } from '@idgate/core';
import type { ApiKeyScope } from '@idgate/schema';
import type { Selectable } from 'kysely';
import type { ApiKeysTable } from '../schema.js';
import { fromJsonArray, toDate, toDateOrNull, toMs, toMsOrNull } from './columns.js';
import {
  countRows,
  findRecord,
  insertRecordReturning,
  keysetPage,
  listInPageOrder,
  type RepositoryContext,
  type UniqueTable,
  updateRecord,
  updateRows,
} from './support.js';

const API_KEYS: UniqueTable<'api_keys', ApiKeyRecord> = {
  name: 'api_keys',
  toRecord: toApiKey,
  conflicts: {
    api_keys_prefix_unique: 'prefix',
    'api_keys.prefix': 'prefix',
    api_keys_pkey: 'id',
    'api_keys.id': 'id',
  },
  conflictField: 'prefix',
};

export function createApiKeyRepository(ctx: RepositoryContext): ApiKeyRepository {
  const { db } = ctx;
  return {
    async create(key) {
      return insertRecordReturning(ctx, API_KEYS, {
        id: key.id,
        name: key.name,
        prefix: key.prefix,
        hash: key.hash,
        scopes: JSON.stringify(key.scopes),
        cluster_name: key.cluster?.name ?? null,
        cluster_audience: key.cluster?.audience ?? null,
        created_at: toMs(key.createdAt),
        last_used_at: toMsOrNull(key.lastUsedAt),
        expires_at: toMsOrNull(key.expiresAt ?? null),
        revoked_at: toMsOrNull(key.revokedAt),
      });
    },

    findByPrefix: (prefix) => findRecord(db, API_KEYS, 'prefix', prefix),

    findById: (id) => findRecord(db, API_KEYS, 'id', id),

    async update(id, changes) {
      const set = {
        ...(changes.name === undefined ? {} : { name: changes.name }),
        ...(changes.expiresAt === undefined ? {} : { expires_at: toMsOrNull(changes.expiresAt) }),
      };
      if (Object.keys(set).length === 0) {
        const key = await findRecord(db, API_KEYS, 'id', id);
        return key?.revokedAt === null ? key : undefined;
      }
      return updateRecord(db, API_KEYS, 'id', id, set, 'revoked_at');
    },

    list: () => listInPageOrder(ctx, API_KEYS),

    listPage: (limit, after) =>
      keysetPage(
        ctx,
        API_KEYS,
        db.selectFrom('api_keys').selectAll(),
        after === undefined ? { limit } : { limit, after },
      ),

    async revoke(idOrPrefix, at) {
      // By id first, then by prefix, one statement each: a single `id = ? or prefix = ?` could revoke
      // two keys when one key's id happens to equal another's prefix.
      const set = { revoked_at: toMs(at) };
      for (const column of ['id', 'prefix'] as const) {
        if ((await updateRows(db, API_KEYS, column, idOrPrefix, set, 'revoked_at')) > 0) return true;
      }
      return false;
    },

    async revokeByCluster(name, at) {
      return updateRows(db, API_KEYS, 'cluster_name', name, { revoked_at: toMs(at) }, 'revoked_at');
    },

    async rebindCluster(name, cluster) {
      return updateRows(db, API_KEYS, 'cluster_name', name, {
        cluster_name: cluster.name,
        cluster_audience: cluster.audience,
      });
    },

    async touch(id, at) {
      await updateRows(db, API_KEYS, 'id', id, { last_used_at: toMs(at) });
    },

    count: () => countRows(db, 'api_keys'),
  };
}

function toApiKey(row: Selectable<ApiKeysTable>): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    hash: row.hash,
    scopes: fromJsonArray<ApiKeyScope>(row.scopes, 'api_keys.scopes'),
    cluster:
      row.cluster_name === null || row.cluster_audience === null
        ? null
        : { name: row.cluster_name, audience: row.cluster_audience },
    createdAt: toDate(row.created_at),
    lastUsedAt: toDateOrNull(row.last_used_at),
    expiresAt: toDateOrNull(row.expires_at),
    revokedAt: toDateOrNull(row.revoked_at),
  };
}
