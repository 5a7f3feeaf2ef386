import type { InteractionRecord, InteractionRepository, InteractionRequest } from '@idgate/core';
import type { Selectable } from 'kysely';
import type { InteractionsTable } from '../schema.js';
import { fromJsonObject, toDate, toDateOrNull, toMs, toMsOrNull } from './columns.js';
import { type ConflictFields, insertRow, purgeExpiredRows, type RepositoryContext } from './support.js';

const CONFLICTS: ConflictFields = {
  interactions_pkey: 'id',
  'interactions.id': 'id',
};

export function createInteractionRepository(ctx: RepositoryContext): InteractionRepository {
  const { db } = ctx;
  return {
    async create(interaction) {
      await insertRow(ctx, 'interactions', CONFLICTS, 'id', {
        id: interaction.id,
        secret_hash: interaction.secretHash,
        request: JSON.stringify(interaction.request),
        user_id: interaction.userId,
        auth_time: toMsOrNull(interaction.authTime),
        csrf_token: interaction.csrfTokenHash,
        created_at: toMs(interaction.createdAt),
        expires_at: toMs(interaction.expiresAt),
      });
    },

    async findById(id) {
      const row = await db.selectFrom('interactions').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toInteraction(row);
    },

    async setUser(id, userId, authTime) {
      await db
        .updateTable('interactions')
        .set({ user_id: userId, auth_time: toMs(authTime) })
        .where('id', '=', id)
        .execute();
    },

    async remove(id) {
      const result = await db.deleteFrom('interactions').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    purgeExpired: (now) => purgeExpiredRows(db, 'interactions', now),
  };
}

function toInteraction(row: Selectable<InteractionsTable>): InteractionRecord {
  return {
    id: row.id,
    secretHash: row.secret_hash,
    request: interactionRequest(row.request),
    userId: row.user_id,
    authTime: toDateOrNull(row.auth_time),
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
