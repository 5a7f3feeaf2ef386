import type { GrantRecord, GrantRepository } from '@idgate/core';
import type { Insertable, Selectable } from 'kysely';
import type { GrantsTable } from '../schema.js';
import {
  fromAmrColumn,
  fromJsonArray,
  toAmrColumn,
  toDate,
  toDateOrNull,
  toMs,
  toMsOrNull,
} from './columns.js';
import {
  findRecord,
  insertNewReturning,
  livePageOfUser,
  type RecordTable,
  type RepositoryContext,
  updateRecord,
} from './support.js';
import { replaceUpstreamState, upstreamColumns, upstreamOf } from './upstream.js';

const GRANTS: RecordTable<'grants', GrantRecord> = { name: 'grants', toRecord: toGrant };

export function createGrantRepository(ctx: RepositoryContext): GrantRepository {
  const { db } = ctx;

  /**
   * Revokes the live grants whose `column` is `value` in one conditional update, so a grant revoked
   * concurrently is reported by exactly one caller; returns them oldest first.
   */
  const revokeWhere = async (
    column: 'id' | 'session_id' | 'user_id' | 'client_id',
    value: string,
    at: Date,
    clientId?: string,
  ): Promise<GrantRecord[]> => {
    const rows = await db
      .updateTable('grants')
      .set({ revoked_at: toMs(at) })
      .where(column, '=', value)
      .$if(clientId !== undefined, (query) => query.where('client_id', '=', clientId as string))
      .where('revoked_at', 'is', null)
      .returningAll()
      .execute();
    // RETURNING promises no order.
    return rows
      .map(toGrant)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
  };

  return {
    async create(grant) {
      const row = await insertNewReturning(ctx, 'grants', 'id', 'id', grantRow(grant));
      return toGrant(row);
    },

    async updateUpstream(id, upstream, previous) {
      const result = await db
        .updateTable('grants')
        .set(upstreamColumns(upstream))
        .where('id', '=', id)
        // A row a replica older than migration 0018 wrote during an upgrade has no check time:
        // its vouching time stands for it, as `upstreamOf` reads it.
        .where((eb) => eb.fn.coalesce('upstream_checked_at', 'upstream_validated_at'), '=', toMs(previous))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    replaceUpstreamState: (provider, subject, previous, next) =>
      replaceUpstreamState(db, 'grants', { provider, subject, previous, next }),

    findById: (id) => findRecord(db, GRANTS, 'id', id),

    async revoke(id, at) {
      return (await revokeWhere('id', id, at)).length > 0;
    },

    revokeBySession: (sessionId, at, clientId) => revokeWhere('session_id', sessionId, at, clientId),

    revokeByUser: (userId, at) => revokeWhere('user_id', userId, at),

    async recordUse(id, at, address) {
      // The refresh path's read of the grant and the record of its use, as one statement.
      const set = { last_used_at: toMs(at), last_used_address: address };
      return updateRecord(db, GRANTS, 'id', id, set, 'revoked_at');
    },

    listLiveByUser: (userId, now, page) => livePageOfUser(ctx, GRANTS, userId, now, page),

    listLiveByClient: (clientId, now, page) => livePageOfUser(ctx, GRANTS, clientId, now, page, 'client_id'),

    async sessionActivity(sessionIds) {
      if (sessionIds.length === 0) return [];
      const rows = await db
        .selectFrom('grants')
        .select(['session_id', 'client_id', (eb) => eb.fn.max('created_at').as('last_grant_at')])
        .where('session_id', 'in', [...sessionIds])
        .groupBy(['session_id', 'client_id'])
        .execute();
      return rows.map((row) => ({
        sessionId: row.session_id as string,
        clientId: row.client_id,
        lastGrantAt: toDate(row.last_grant_at),
      }));
    },
    revokeByClient: (clientId, at) => revokeWhere('client_id', clientId, at),
  };
}

/** A grant as the `grants` table stores it. */
export function grantRow(grant: GrantRecord): Insertable<GrantsTable> {
  return {
    id: grant.id,
    user_id: grant.userId,
    client_id: grant.clientId,
    scope: JSON.stringify(grant.scope),
    auth_time: toMs(grant.authTime),
    session_id: grant.sessionId,
    created_at: toMs(grant.createdAt),
    expires_at: toMs(grant.expiresAt),
    revoked_at: toMsOrNull(grant.revokedAt),
    last_used_at: toMsOrNull(grant.lastUsedAt ?? null),
    last_used_address: grant.lastUsedAddress ?? null,
    resources: grant.resources == null ? null : JSON.stringify(grant.resources),
    ...upstreamColumns(grant.upstream),
    amr: toAmrColumn(grant.amr),
  };
}

export function toGrant(row: Selectable<GrantsTable>): GrantRecord {
  return {
    id: row.id,
    userId: row.user_id,
    clientId: row.client_id,
    scope: fromJsonArray(row.scope, 'grants.scope'),
    authTime: toDate(row.auth_time),
    sessionId: row.session_id,
    createdAt: toDate(row.created_at),
    expiresAt: toDate(row.expires_at),
    revokedAt: toDateOrNull(row.revoked_at),
    lastUsedAt: toDateOrNull(row.last_used_at),
    lastUsedAddress: row.last_used_address,
    upstream: upstreamOf(row),
    amr: fromAmrColumn(row.amr),
    resources: row.resources === null ? null : fromJsonArray(row.resources, 'grants.resources'),
  };
}
