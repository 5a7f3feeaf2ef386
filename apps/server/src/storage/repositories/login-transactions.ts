import type { LoginTransactionRecord, LoginTransactionRepository } from '@idgate/core';
import type { Selectable } from 'kysely';
import type { LoginTransactionsTable } from '../schema.js';
import { toDate, toDateOrNull, toMs, toMsOrNull } from './columns.js';
import {
  claimOnce,
  findRecord,
  insertRecord,
  purgeExpiredRows,
  type RepositoryContext,
  type UniqueTable,
} from './support.js';

const TRANSACTIONS: UniqueTable<'login_transactions', LoginTransactionRecord> = {
  name: 'login_transactions',
  toRecord: toTransaction,
  conflicts: { login_transactions_pkey: 'stateHash', 'login_transactions.state_hash': 'stateHash' },
  conflictField: 'stateHash',
};

export function createLoginTransactionRepository(ctx: RepositoryContext): LoginTransactionRepository {
  const { db } = ctx;
  return {
    async create(transaction) {
      await insertRecord(ctx, TRANSACTIONS, {
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

    find: (stateHash) => findRecord(db, TRANSACTIONS, 'state_hash', stateHash),

    async consume(stateHash, at) {
      const claim = await claimOnce(db, TRANSACTIONS, stateHash, at);
      if (claim === undefined) return { status: 'unknown' };
      return { status: claim.won ? 'consumed' : 'replayed', transaction: claim.record };
    },

    purgeExpired: (now) => purgeExpiredRows(db, TRANSACTIONS, now),
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
