import type { BrowserSessionRecord, BrowserSessionRepository } from '@idgate/core';
import type { Selectable } from 'kysely';
import type { BrowserSessionsTable } from '../schema.js';
import { fromAmrColumn, toAmrColumn, toDate, toDateOrNull, toMs, toMsOrNull } from './columns.js';
import {
  findRecord,
  insertRecord,
  keysetPage,
  livePageOfUser,
  type RepositoryContext,
  stampOnce,
  type UniqueTable,
} from './support.js';
import { replaceUpstreamState, upstreamColumns, upstreamOf } from './upstream.js';

const SESSIONS: UniqueTable<'browser_sessions', BrowserSessionRecord> = {
  name: 'browser_sessions',
  toRecord: toSession,
  conflicts: {
    browser_sessions_secret_hash_unique: 'secretHash',
    'browser_sessions.secret_hash': 'secretHash',
    browser_sessions_pkey: 'id',
    'browser_sessions.id': 'id',
  },
  conflictField: 'id',
};

export function createBrowserSessionRepository(ctx: RepositoryContext): BrowserSessionRepository {
  const { db } = ctx;
  return {
    async create(session) {
      await insertRecord(ctx, SESSIONS, {
        id: session.id,
        secret_hash: session.secretHash,
        user_id: session.userId,
        auth_time: toMs(session.authTime),
        created_at: toMs(session.createdAt),
        expires_at: toMs(session.expiresAt),
        ended_at: toMsOrNull(session.endedAt),
        source_address: session.sourceAddress ?? null,
        user_agent: session.userAgent ?? null,
        ...upstreamColumns(session.upstream),
        amr: toAmrColumn(session.amr),
      });
    },

    findBySecretHash: (secretHash) => findRecord(db, SESSIONS, 'secret_hash', secretHash),

    findById: (id) => findRecord(db, SESSIONS, 'id', id),

    replaceUpstreamState: (provider, subject, previous, next) =>
      replaceUpstreamState(db, 'browser_sessions', { provider, subject, previous, next }),

    end: (id, at) => stampOnce(db, SESSIONS, id, at),

    listLiveByUser: (userId, now, page) => livePageOfUser(ctx, SESSIONS, userId, now, page),

    listLiveByClient(clientId, now, page) {
      const live = db
        .selectFrom('browser_sessions')
        .selectAll()
        .where('ended_at', 'is', null)
        .where('expires_at', '>', toMs(now))
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('grants')
            .select((g) => g.fn.coalesce('grants.session_id', g.val('')).as('session_id'))
            .where('grants.client_id', '=', clientId)
            .where('grants.session_id', 'is not', null),
        );
      return keysetPage(ctx, SESSIONS, live, page);
    },

    async endByUser(userId, at) {
      const rows = await db
        .updateTable('browser_sessions')
        .set({ ended_at: toMs(at) })
        .where('user_id', '=', userId)
        .where('ended_at', 'is', null)
        .where('expires_at', '>', toMs(at))
        .returning('id')
        .execute();
      return rows.map((row) => row.id);
    },
  };
}

function toSession(row: Selectable<BrowserSessionsTable>): BrowserSessionRecord {
  return {
    id: row.id,
    secretHash: row.secret_hash,
    userId: row.user_id,
    authTime: toDate(row.auth_time),
    createdAt: toDate(row.created_at),
    expiresAt: toDate(row.expires_at),
    endedAt: toDateOrNull(row.ended_at),
    sourceAddress: row.source_address,
    userAgent: row.user_agent,
    upstream: upstreamOf(row),
    amr: fromAmrColumn(row.amr),
  };
}
