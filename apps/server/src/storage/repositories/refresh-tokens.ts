import type { RefreshTokenRecord, RefreshTokenRepository } from '@idgate/core';
import type { Selectable } from 'kysely';
import type { RefreshTokensTable } from '../schema.js';
import { fromJsonArray, toDate, toDateOrNull, toMs, toMsOrNull } from './columns.js';
import {
  claimOnce,
  findRecord,
  insertNew,
  purgeExpiredRows,
  type RecordTable,
  type RepositoryContext,
} from './support.js';

const REFRESH_TOKENS: RecordTable<'refresh_tokens', RefreshTokenRecord> = {
  name: 'refresh_tokens',
  toRecord: toToken,
};

export function createRefreshTokenRepository(ctx: RepositoryContext): RefreshTokenRepository {
  const { db } = ctx;
  return {
    async create(token) {
      // On the hot path inside the grant step's transaction: no savepoint (see insertNew).
      await insertNew(ctx, 'refresh_tokens', 'hash', 'hash', [
        {
          hash: token.hash,
          grant_id: token.grantId,
          client_id: token.clientId,
          user_id: token.userId,
          scope: JSON.stringify(token.scope),
          created_at: toMs(token.createdAt),
          expires_at: toMs(token.expiresAt),
          used_at: toMsOrNull(token.usedAt),
        },
      ]);
    },

    findByHash: (hash) => findRecord(db, REFRESH_TOKENS, 'hash', hash),

    async use(hash, at) {
      const claim = await claimOnce(db, REFRESH_TOKENS, hash, at);
      if (claim === undefined) return { status: 'unknown' };
      return { status: claim.won ? 'rotated' : 'reused', token: claim.record };
    },

    purgeExpired: (now) => purgeExpiredRows(db, REFRESH_TOKENS, now),
  };
}

function toToken(row: Selectable<RefreshTokensTable>): RefreshTokenRecord {
  return {
    hash: row.hash,
    grantId: row.grant_id,
    clientId: row.client_id,
    userId: row.user_id,
    scope: fromJsonArray(row.scope, 'refresh_tokens.scope'),
    createdAt: toDate(row.created_at),
    expiresAt: toDate(row.expires_at),
    usedAt: toDateOrNull(row.used_at),
  };
}
