import type { LoginTransactionRecord, LoginTransactionRepository } from '@idgate/core';
import type { Selectable } from 'kysely';
import type { LoginTransactionsTable } from '../schema.js';
import { toDate, toDateOrNull, toMs, toMsOrNull } from './columns.js';
import {
  type ConflictFields,
  claimOnce,
  insertRow,
  purgeExpiredRows,
  type RepositoryContext,
} from './support.js';

const CONFLICTS: ConflictFields = {
  login_transactions_pkey: 'stateHash',
  'login_transactions.state_hash': 'stateHash',
};

export function createLoginTransactionRepository(ctx: RepositoryContext): LoginTransactionRepository {
  const { db } = ctx;
  return {
    async create(transaction) {
      await insertRow(ctx, 'login_transactions', CONFLICTS, 'stateHash', {
        state_hash: transaction.stateHash,
        provider: transaction.provider,
        binding_hash: transaction.bindingHash,
        nonce: transaction.nonce,
        code_verifier: transaction.codeVerifier,
        interaction_id: transaction.interactionId,
        created_at: toMs(transaction.createdAt),
        expires_at: toMs(transaction.expiresAt),
        consumed_at: toMsOrNull(transaction.consumedAt),
      });
    },

    async find(stateHash) {
      const row = await db
        .selectFrom('login_transactions')
        .selectAll()
        .where('state_hash', '=', stateHash)
        .executeTakeFirst();
      return row && toTransaction(row);
    },

    async consume(stateHash, at) {
      const claim = await claimOnce(db, 'login_transactions', stateHash, at);
      if (claim === undefined) return { status: 'unknown' };
      return { status: claim.won ? 'consumed' : 'replayed', transaction: toTransaction(claim.row) };
    },

    purgeExpired: (now) => purgeExpiredRows(db, 'login_transactions', now),
  };
}

function toTransaction(row: Selectable<LoginTransactionsTable>): LoginTransactionRecord {
  return {
    stateHash: row.state_hash,
    provider: row.provider,
    bindingHash: row.binding_hash,
    nonce: row.nonce,
    codeVerifier: row.code_verifier,
    interactionId: row.interaction_id,
    createdAt: toDate(row.created_at),
    expiresAt: toDate(row.expires_at),
    consumedAt: toDateOrNull(row.consumed_at),
  };
}
