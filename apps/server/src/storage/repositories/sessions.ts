import type { BrowserSessionRecord, BrowserSessionRepository } from '@idgate/core';
import type { Selectable } from 'kysely';
import type { BrowserSessionsTable } from '../schema.js';
import { toDate, toDateOrNull, toMs, toMsOrNull } from './columns.js';
import { type ConflictFields, insertRow, keysetPage, type RepositoryContext, stampOnce } from './support.js';
import { replaceUpstreamState, upstreamColumns, upstreamOf } from './upstream.js';

const CONFLICTS: ConflictFields = {
  browser_sessions_secret_hash_unique: 'secretHash',
  'browser_sessions.secret_hash': 'secretHash',
  browser_sessions_pkey: 'id',
  'browser_sessions.id': 'id',
};

export function createBrowserSessionRepository(ctx: RepositoryContext): BrowserSessionRepository {
  const { db } = ctx;
  return {
    async create(session) {
      await insertRow(ctx, 'browser_sessions', CONFLICTS, 'id', {
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
      });
    },

    async findBySecretHash(secretHash) {
      const row = await db
        .selectFrom('browser_sessions')
        .selectAll()
        .where('secret_hash', '=', secretHash)
        .executeTakeFirst();
      return row && toSession(row);
    },

    async findById(id) {
      const row = await db.selectFrom('browser_sessions').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toSession(row);
    },

    replaceUpstreamState: (provider, subject, previous, next) =>
      replaceUpstreamState(db, 'browser_sessions', { provider, subject, previous, next }),

    end: (id, at) => stampOnce(db, 'browser_sessions', id, at),

    async listLiveByUser(userId, now, page) {
      const rows = await keysetPage(
        ctx,
        db
          .selectFrom('browser_sessions')
          .selectAll()
          .where('user_id', '=', userId)
          .where('ended_at', 'is', null)
          .where('expires_at', '>', toMs(now)),
        page,
      ).execute();
      return rows.map(toSession);
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
  };
}
