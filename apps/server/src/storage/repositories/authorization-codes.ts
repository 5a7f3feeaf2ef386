import {
  type AuthorizationCodeRecord,
  type AuthorizationCodeRepository,
  type CodeChallengeMethod,
  StorageConflictError,
} from '@idgate/core';
import type { Kysely, Selectable } from 'kysely';
import type { AuthorizationCodesTable, Schema } from '../schema.js';
import {
  fromAmrColumn,
  fromJsonArray,
  toAmrColumn,
  toDate,
  toDateOrNull,
  toMs,
  toMsOrNull,
} from './columns.js';
import { grantRow, toGrant } from './grants.js';
import {
  claimOnce,
  insertNewReturning,
  insertRecord,
  purgeExpiredRows,
  type RepositoryContext,
  type UniqueTable,
} from './support.js';
import { upstreamColumns, upstreamOf } from './upstream.js';

const CODES: UniqueTable<'authorization_codes', AuthorizationCodeRecord> = {
  name: 'authorization_codes',
  toRecord: toCode,
  conflicts: { authorization_codes_pkey: 'hash', 'authorization_codes.hash': 'hash' },
  conflictField: 'hash',
};

export function createAuthorizationCodeRepository(ctx: RepositoryContext): AuthorizationCodeRepository {
  const { db } = ctx;
  return {
    async create(code) {
      await insertRecord(ctx, CODES, {
        hash: code.hash,
        client_id: code.clientId,
        user_id: code.userId,
        redirect_uri: code.redirectUri,
        scope: JSON.stringify(code.scope),
        nonce: code.nonce,
        code_challenge: code.codeChallenge,
        code_challenge_method: code.codeChallengeMethod,
        resource: code.resource === null ? null : JSON.stringify(code.resource),
        auth_time: toMs(code.authTime),
        session_id: code.sessionId,
        grant_id: code.grantId,
        created_at: toMs(code.createdAt),
        expires_at: toMs(code.expiresAt),
        consumed_at: toMsOrNull(code.consumedAt),
        ...upstreamColumns(code.upstream),
        amr: toAmrColumn(code.amr),
      });
    },

    async redeem(hash, at) {
      const claim = await claimOnce(db, CODES, hash, at);
      if (claim === undefined) return { status: 'unknown' };
      return { status: claim.won ? 'redeemed' : 'replayed', code: claim.record };
    },

    async openGrant(hash, grant) {
      if (ctx.dialect === 'postgres') {
        // One round trip: the grant goes in, and the code points at it, in one statement.
        const row = await db
          .with('opened', (q) =>
            q
              .insertInto('grants')
              .values(grantRow(grant))
              .onConflict((conflict) => conflict.column('id').doNothing())
              .returningAll(),
          )
          .with('attached', (q) =>
            q
              .updateTable('authorization_codes')
              .set((eb) => ({ grant_id: eb.selectFrom('opened').select('opened.id') }))
              .where('hash', '=', hash)
              .where((eb) => eb.exists(eb.selectFrom('opened').select('opened.id')))
              .returning('authorization_codes.hash'),
          )
          .selectFrom('opened')
          .selectAll()
          .executeTakeFirst();
        if (row === undefined) throw new StorageConflictError('id');
        return toGrant(row);
      }
      // SQLite has no data-modifying CTE: two statements in one transaction (the open one, if any).
      const open = async (storage: Kysely<Schema>) => {
        const row = await insertNewReturning({ ...ctx, db: storage }, 'grants', 'id', 'id', grantRow(grant));
        await storage
          .updateTable('authorization_codes')
          .set({ grant_id: grant.id })
          .where('hash', '=', hash)
          .execute();
        return toGrant(row);
      };
      return ctx.inTransaction ? open(db) : db.transaction().execute(open);
    },

    purgeExpired: (now) => purgeExpiredRows(db, CODES, now),
  };
}

function toCode(row: Selectable<AuthorizationCodesTable>): AuthorizationCodeRecord {
  return {
    hash: row.hash,
    clientId: row.client_id,
    userId: row.user_id,
    redirectUri: row.redirect_uri,
    scope: fromJsonArray(row.scope, 'authorization_codes.scope'),
    nonce: row.nonce,
    codeChallenge: row.code_challenge,
    codeChallengeMethod: row.code_challenge_method as CodeChallengeMethod | null,
    resource: row.resource === null ? null : fromJsonArray(row.resource, 'authorization_codes.resource'),
    authTime: toDate(row.auth_time),
    sessionId: row.session_id,
    upstream: upstreamOf(row),
    amr: fromAmrColumn(row.amr),
    grantId: row.grant_id,
    createdAt: toDate(row.created_at),
    expiresAt: toDate(row.expires_at),
    consumedAt: toDateOrNull(row.consumed_at),
  };
}
