import type {
  GrantUpstream,
  InteractionRecord,
  InteractionRepository,
  InteractionRequest,
} from '@idgate/core';
import type { Selectable } from 'kysely';
import type { InteractionsTable } from '../schema.js';
import {
  fromAmrColumn,
  fromJsonObject,
  toAmrColumn,
  toDate,
  toDateOrNull,
  toMs,
  toMsOrNull,
} from './columns.js';
import {
  deleteRows,
  findRecord,
  insertRecord,
  purgeExpiredRows,
  type RepositoryContext,
  type UniqueTable,
  updateRows,
} from './support.js';

const INTERACTIONS: UniqueTable<'interactions', InteractionRecord> = {
  name: 'interactions',
  toRecord: toInteraction,
  conflicts: { interactions_pkey: 'id', 'interactions.id': 'id' },
  conflictField: 'id',
};

export function createInteractionRepository(ctx: RepositoryContext): InteractionRepository {
  const { db } = ctx;
  return {
    async create(interaction) {
      await insertRecord(ctx, INTERACTIONS, {
        id: interaction.id,
        secret_hash: interaction.secretHash,
        request: JSON.stringify(interaction.request),
        user_id: interaction.userId,
        auth_time: toMsOrNull(interaction.authTime),
        amr: toAmrColumn(interaction.amr),
        pending_user_id: interaction.pendingUserId ?? null,
        pending_upstream: pendingUpstreamColumn(interaction.pendingUpstream),
        csrf_token: interaction.csrfTokenHash,
        created_at: toMs(interaction.createdAt),
        expires_at: toMs(interaction.expiresAt),
      });
    },

    findById: (id) => findRecord(db, INTERACTIONS, 'id', id),

    async setUser(id, userId, authTime, amr) {
      await updateRows(db, INTERACTIONS, 'id', id, {
        user_id: userId,
        auth_time: toMs(authTime),
        amr: toAmrColumn(amr),
        pending_user_id: null,
        pending_upstream: null,
      });
    },

    async setPendingUser(id, userId, upstream) {
      await updateRows(db, INTERACTIONS, 'id', id, {
        pending_user_id: userId,
        pending_upstream: pendingUpstreamColumn(upstream),
      });
    },

    async remove(id) {
      return (await deleteRows(db, INTERACTIONS, 'id', id)) > 0;
    },

    purgeExpired: (now) => purgeExpiredRows(db, INTERACTIONS, now),
  };
}

function toInteraction(row: Selectable<InteractionsTable>): InteractionRecord {
  return {
    id: row.id,
    secretHash: row.secret_hash,
    request: interactionRequest(row.request),
    userId: row.user_id,
    authTime: toDateOrNull(row.auth_time),
    amr: fromAmrColumn(row.amr),
    pendingUserId: row.pending_user_id,
    pendingUpstream: pendingUpstreamOf(row.pending_upstream),
    csrfTokenHash: row.csrf_token,
    createdAt: toDate(row.created_at),
    expiresAt: toDate(row.expires_at),
  };
}

/** What this repository wrote: an interaction's request, as JSON (see `toRow`). */
function interactionRequest(text: string): InteractionRequest {
  const request: object = fromJsonObject(text, 'interactions.request');
  return request as InteractionRequest;
}

/** A pending user's upstream identity as its column holds it: JSON, instants in ms. */
function pendingUpstreamColumn(upstream: GrantUpstream | null | undefined): string | null {
  if (upstream === undefined || upstream === null) return null;
  return JSON.stringify({
    ...upstream,
    validatedAt: toMs(upstream.validatedAt),
    checkedAt: toMs(upstream.checkedAt),
  });
}

function pendingUpstreamOf(text: string | null): GrantUpstream | null {
  if (text === null) return null;
  const stored = fromJsonObject(text, 'interactions.pending_upstream') as Omit<
    GrantUpstream,
    'validatedAt' | 'checkedAt'
  > & { validatedAt: number; checkedAt: number };
  return { ...stored, validatedAt: toDate(stored.validatedAt), checkedAt: toDate(stored.checkedAt) };
}
