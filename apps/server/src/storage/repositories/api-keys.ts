import type { ApiKeyRecord, ApiKeyRepository } from '@idgate/core';
import type { ApiKeyScope } from '@idgate/schema';
import type { Selectable } from 'kysely';
import type { ApiKeysTable } from '../schema.js';
import { fromJsonArray, toDate, toDateOrNull, toMs, toMsOrNull } from './columns.js';
import {
  type ConflictFields,
  countRows,
  inByteOrder,
  insertRowReturning,
  keysetPage,
  type RepositoryContext,
} from './support.js';

const CONFLICTS: ConflictFields = {
  api_keys_prefix_unique: 'prefix',
  'api_keys.prefix': 'prefix',
  api_keys_pkey: 'id',
  'api_keys.id': 'id',
};

export function createApiKeyRepository(ctx: RepositoryContext): ApiKeyRepository {
  const { db } = ctx;
  return {
    async create(key) {
      const row = await insertRowReturning(ctx, 'api_keys', CONFLICTS, 'prefix', {
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
      return toApiKey(row);
    },

    async findByPrefix(prefix) {
      const row = await db.selectFrom('api_keys').selectAll().where('prefix', '=', prefix).executeTakeFirst();
      return row && toApiKey(row);
    },

    async list() {
      const rows = await db
        .selectFrom('api_keys')
        .selectAll()
        .orderBy('created_at')
        .orderBy(inByteOrder(ctx, 'id'))
        .execute();
      return rows.map(toApiKey);
    },

    async listPage(limit, after) {
      const query = db.selectFrom('api_keys').selectAll();
      const rows = await keysetPage(ctx, query, after === undefined ? { limit } : { limit, after }).execute();
      return rows.map(toApiKey);
    },

    async revoke(idOrPrefix, at) {
      // By id first, then by prefix, one statement each: a single `id = ? or prefix = ?` could revoke
      // two keys when one key's id happens to equal another's prefix.
      const revokedAt = toMs(at);
      for (const column of ['id', 'prefix'] as const) {
        const result = await db
          .updateTable('api_keys')
          .set({ revoked_at: revokedAt })
          .where(column, '=', idOrPrefix)
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        if (result.numUpdatedRows > 0n) return true;
      }
      return false;
    },

    async revokeByCluster(name, at) {
      const result = await db
        .updateTable('api_keys')
        .set({ revoked_at: toMs(at) })
        .where('cluster_name', '=', name)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async touch(id, at) {
      await db
        .updateTable('api_keys')
        .set({ last_used_at: toMs(at) })
        .where('id', '=', id)
        .execute();
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
