import type {
  DeviceAuthorizationRecord,
  DeviceAuthorizationRepository,
  DeviceAuthorizationStatus,
} from '@idgate/core';
import { type Selectable, sql } from 'kysely';
import type { DeviceAuthorizationsTable } from '../schema.js';
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
  insertRecord,
  purgeExpiredRows,
  type RepositoryContext,
  type UniqueTable,
} from './support.js';
import { upstreamColumns, upstreamOf } from './upstream.js';

const DEVICES: UniqueTable<'device_authorizations', DeviceAuthorizationRecord> = {
  name: 'device_authorizations',
  toRecord: toAuthorization,
  conflicts: {
    device_authorizations_pkey: 'deviceCodeHash',
    'device_authorizations.device_code_hash': 'deviceCodeHash',
    device_authorizations_user_code_unique: 'userCode',
    'device_authorizations.user_code': 'userCode',
  },
  conflictField: 'deviceCodeHash',
};

export function createDeviceAuthorizationRepository(ctx: RepositoryContext): DeviceAuthorizationRepository {
  const { db } = ctx;
  return {
    async create(record) {
      // An expired request gives its user code up to the new one; a live one keeps it (conflict).
      await db
        .deleteFrom('device_authorizations')
        .where('user_code', '=', record.userCode)
        .where('expires_at', '<=', toMs(record.createdAt))
        .execute();
      await insertRecord(ctx, DEVICES, {
        device_code_hash: record.deviceCodeHash,
        user_code: record.userCode,
        client_id: record.clientId,
        scope: JSON.stringify(record.scope),
        resource: record.resource === null ? null : JSON.stringify(record.resource),
        status: record.status,
        user_id: record.userId,
        auth_time: toMsOrNull(record.authTime),
        session_id: record.sessionId,
        created_at: toMs(record.createdAt),
        expires_at: toMs(record.expiresAt),
        last_polled_at: toMsOrNull(record.lastPolledAt),
        interval: record.interval,
        consumed_at: toMsOrNull(record.consumedAt),
        ...upstreamColumns(record.upstream),
        amr: toAmrColumn(record.amr),
      });
    },

    findByDeviceCodeHash: (hash) => findRecord(db, DEVICES, 'device_code_hash', hash),

    async findLiveByUserCode(userCode, now) {
      const row = await db
        .selectFrom('device_authorizations')
        .selectAll()
        .where('user_code', '=', userCode)
        .where('expires_at', '>', toMs(now))
        .executeTakeFirst();
      return row && toAuthorization(row);
    },

    // One statement: the update decides from the row it changes (every SET expression sees the
    // row as it was), so a concurrent poll is re-checked against this one's time by the database
    // (PostgreSQL re-evaluates it on the row as committed; SQLite runs writes one at a time).
    async poll(hash, clientId, at, slowDownSeconds) {
      const now = toMs(at);
      const live = sql<boolean>`${sql.ref('status')} = 'pending' and ${sql.ref('expires_at')} > ${now}`;
      const tooSoon = sql<boolean>`(${live} and ${sql.ref('last_polled_at')} is not null and ${now} - ${sql.ref('last_polled_at')} < ${sql.ref('interval')} * 1000)`;
      const row = await db
        .updateTable('device_authorizations')
        .set({
          last_polled_at: sql<number>`case when ${live} then ${now} else ${sql.ref('last_polled_at')} end`,
          interval: sql<number>`case when ${tooSoon} then ${sql.ref('interval')} + ${slowDownSeconds} else ${sql.ref('interval')} end`,
          poll_slowed: sql<number>`case when ${tooSoon} then 1 else 0 end`,
        })
        .where('device_code_hash', '=', hash)
        .where('client_id', '=', clientId)
        .returningAll()
        .executeTakeFirst();
      return row && { record: toAuthorization(row), slowDown: Number(row.poll_slowed) === 1 };
    },

    // As `stampOnce` does: the conditional update is the whole decision, so of concurrent callers
    // exactly one moves the row out of `pending`.
    async decide(hash, decision, at) {
      const result = await db
        .updateTable('device_authorizations')
        .set({
          status: decision.status,
          user_id: decision.userId,
          ...(decision.status === 'approved'
            ? {
                auth_time: toMs(decision.authTime),
                session_id: decision.sessionId,
                ...upstreamColumns(decision.upstream),
                amr: toAmrColumn(decision.amr),
              }
            : {}),
        })
        .where('device_code_hash', '=', hash)
        .where('status', '=', 'pending')
        .where('expires_at', '>', toMs(at))
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    // `claimOnce`'s pattern, with the status as the condition: approved → consumed happens once.
    // The winner's row comes back from the update (RETURNING): only a loser reads it again.
    async consume(hash, at) {
      const claimed = await db
        .updateTable('device_authorizations')
        .set({ status: 'consumed', consumed_at: toMs(at) })
        .where('device_code_hash', '=', hash)
        .where('status', '=', 'approved')
        .returningAll()
        .executeTakeFirst();
      if (claimed !== undefined) return { won: true, record: toAuthorization(claimed) };
      const record = await findRecord(db, DEVICES, 'device_code_hash', hash);
      return record && { won: false, record };
    },

    purgeExpired: (now) => purgeExpiredRows(db, DEVICES, now),
  };
}

function toAuthorization(row: Selectable<DeviceAuthorizationsTable>): DeviceAuthorizationRecord {
  return {
    deviceCodeHash: row.device_code_hash,
    userCode: row.user_code,
    clientId: row.client_id,
    scope: fromJsonArray(row.scope, 'device_authorizations.scope'),
    resource: row.resource === null ? null : fromJsonArray(row.resource, 'device_authorizations.resource'),
    status: row.status as DeviceAuthorizationStatus,
    userId: row.user_id,
    authTime: toDateOrNull(row.auth_time),
    sessionId: row.session_id,
    upstream: upstreamOf(row),
    amr: fromAmrColumn(row.amr),
    createdAt: toDate(row.created_at),
    expiresAt: toDate(row.expires_at),
    lastPolledAt: toDateOrNull(row.last_polled_at),
    interval: Number(row.interval),
    consumedAt: toDateOrNull(row.consumed_at),
  };
}
