import type { FactorKind, FactorRecord, FactorRepository, WebAuthnChallengeRecord } from '@idgate/core';
import type { Selectable } from 'kysely';
import type { FactorsTable } from '../schema.js';
import { toCount, toDate, toDateOrNull, toMs, toMsOrNull } from './columns.js';
import { insertRecordReturning, type RepositoryContext, type UniqueTable } from './support.js';

const FACTORS: UniqueTable<'factors', FactorRecord> = {
  name: 'factors',
  toRecord: toFactor,
  conflicts: {
    factors_pkey: 'id',
    'factors.id': 'id',
    factors_user_name_unique: 'name',
    factors_credential_id_unique: 'credentialId',
    'factors.credential_id': 'credentialId',
    'factors.user_id': 'name',
    'factors.name': 'name',
  },
  conflictField: 'name',
};

export function createFactorRepository(ctx: RepositoryContext): FactorRepository {
  const { db } = ctx;
  const ofUser = (userId: string) => db.selectFrom('factors').selectAll().where('user_id', '=', userId);
  return {
    async list(userId) {
      const rows = await ofUser(userId).orderBy('created_at').orderBy('id').execute();
      return rows.map(toFactor);
    },

    async findById(userId, id) {
      const row = await ofUser(userId).where('id', '=', id).executeTakeFirst();
      return row === undefined ? undefined : toFactor(row);
    },

    create: (factor) =>
      insertRecordReturning(ctx, FACTORS, {
        id: factor.id,
        user_id: factor.userId,
        kind: factor.kind,
        name: factor.name,
        secret: factor.sealedSecret,
        credential_id: factor.credentialId,
        counter: factor.lastUsedStep,
        transports: factor.transports === null ? null : JSON.stringify(factor.transports),
        created_at: toMs(factor.createdAt),
        confirmed_at: toMsOrNull(factor.confirmedAt),
        last_used_at: toMsOrNull(factor.lastUsedAt),
      }),

    async confirm(userId, id, step, at) {
      const result = await db
        .updateTable('factors')
        .set({ confirmed_at: toMs(at), counter: step, last_used_at: toMs(at) })
        .where('user_id', '=', userId)
        .where('id', '=', id)
        .where('confirmed_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async useStep(userId, id, step, at) {
      // Compare-and-set on the last step: of two requests with one code, one updates the row.
      const result = await db
        .updateTable('factors')
        .set({ counter: step, last_used_at: toMs(at) })
        .where('user_id', '=', userId)
        .where('id', '=', id)
        .where('confirmed_at', 'is not', null)
        .where((eb) => eb.or([eb('counter', 'is', null), eb('counter', '<', step)]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async findByCredentialId(credentialId) {
      const row = await db
        .selectFrom('factors')
        .selectAll()
        .where('credential_id', '=', credentialId)
        .executeTakeFirst();
      return row === undefined ? undefined : toFactor(row);
    },

    async useSignCount(userId, id, previous, next, at) {
      // Compare-and-set on the counter: of two assertions read at one counter, one updates the row.
      const result = await db
        .updateTable('factors')
        .set({ counter: next, last_used_at: toMs(at) })
        .where('user_id', '=', userId)
        .where('id', '=', id)
        .where('confirmed_at', 'is not', null)
        .where('counter', '=', previous)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async saveChallenge(challenge, now) {
      await db.deleteFrom('webauthn_challenges').where('expires_at', '<=', toMs(now)).execute();
      await db
        .insertInto('webauthn_challenges')
        .values({
          id: challenge.id,
          purpose: challenge.purpose,
          interaction_id: challenge.interactionId,
          user_id: challenge.userId,
          created_at: toMs(challenge.createdAt),
          expires_at: toMs(challenge.expiresAt),
        })
        .execute();
    },

    async takeChallenge(id) {
      const row = await db
        .deleteFrom('webauthn_challenges')
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      if (row === undefined) return undefined;
      return {
        id: row.id,
        purpose: row.purpose as WebAuthnChallengeRecord['purpose'],
        interactionId: row.interaction_id,
        userId: row.user_id,
        createdAt: toDate(row.created_at),
        expiresAt: toDate(row.expires_at),
      };
    },

    async remove(userId, id) {
      const result = await db
        .deleteFrom('factors')
        .where('user_id', '=', userId)
        .where('id', '=', id)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async removeAll(userId) {
      const result = await db.deleteFrom('factors').where('user_id', '=', userId).executeTakeFirst();
      await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
      return Number(result.numDeletedRows);
    },

    async replaceRecoveryCodes(userId, hashes, at) {
      await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
      if (hashes.length === 0) return;
      await db
        .insertInto('recovery_codes')
        .values(hashes.map((hash) => ({ user_id: userId, hash, created_at: toMs(at), used_at: null })))
        .execute();
    },

    async useRecoveryCode(userId, hash, at) {
      const result = await db
        .updateTable('recovery_codes')
        .set({ used_at: toMs(at) })
        .where('user_id', '=', userId)
        .where('hash', '=', hash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async recoveryCodesLeft(userId) {
      const row = await db
        .selectFrom('recovery_codes')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('user_id', '=', userId)
        .where('used_at', 'is', null)
        .executeTakeFirstOrThrow();
      return toCount(row as { n: number | string | bigint });
    },

    async setRequired(userId, required, at) {
      if (!required) {
        await db.deleteFrom('mfa_requirements').where('user_id', '=', userId).execute();
        return;
      }
      await db
        .insertInto('mfa_requirements')
        .values({ user_id: userId, required_at: toMs(at) })
        .onConflict((oc) => oc.column('user_id').doNothing())
        .execute();
    },

    async isRequired(userId) {
      const row = await db
        .selectFrom('mfa_requirements')
        .select('user_id')
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row !== undefined;
    },
  };
}

function toFactor(row: Selectable<FactorsTable>): FactorRecord {
  return {
    id: row.id,
    userId: row.user_id,
    kind: row.kind as FactorKind,
    name: row.name,
    sealedSecret: row.secret,
    lastUsedStep: row.counter === null ? null : Number(row.counter),
    credentialId: row.credential_id,
    transports: row.transports === null ? null : (JSON.parse(row.transports) as string[]),
    createdAt: toDate(row.created_at),
    confirmedAt: toDateOrNull(row.confirmed_at),
    lastUsedAt: toDateOrNull(row.last_used_at),
  };
}
