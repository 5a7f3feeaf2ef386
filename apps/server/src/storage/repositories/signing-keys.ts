import type { SigningKeyRecord, SigningKeyRepository } from '@idgate/core';
import type { SigningAlgorithm } from '@idgate/schema';
import { type Selectable, sql } from 'kysely';
import type { SigningKeysTable } from '../schema.js';
import { fromJsonObject, toDate, toDateOrNull, toMs, toMsOrNull } from './columns.js';
import {
  inByteOrder,
  insertRecord,
  type RepositoryContext,
  type UniqueTable,
  updateRows,
} from './support.js';

const SIGNING_KEYS: UniqueTable<'signing_keys', SigningKeyRecord> = {
  name: 'signing_keys',
  toRecord: toSigningKey,
  conflicts: { signing_keys_pkey: 'kid', 'signing_keys.kid': 'kid' },
  conflictField: 'kid',
};

export function createSigningKeyRepository(ctx: RepositoryContext): SigningKeyRepository {
  const { db } = ctx;
  return {
    async insert(key) {
      await insertRecord(ctx, SIGNING_KEYS, {
        kid: key.kid,
        alg: key.alg,
        public_jwk: JSON.stringify(key.publicJwk),
        sealed_private_jwk: key.sealedPrivateJwk,
        created_at: toMs(key.createdAt),
        retired_at: toMsOrNull(key.retiredAt),
        published_until: toMsOrNull(key.publishedUntil),
      });
    },

    async list() {
      const rows = await db
        .selectFrom('signing_keys')
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy(sql`${inByteOrder(ctx, 'kid')} desc`)
        .execute();
      return rows.map(toSigningKey);
    },

    async withdraw(kid, at) {
      const ms = toMs(at);
      const result = await db
        .updateTable('signing_keys')
        .set({
          retired_at: sql<number>`case when retired_at is null or retired_at > ${ms} then ${ms} else retired_at end`,
          published_until: ms,
        })
        .where('kid', '=', kid)
        .where((eb) => eb.or([eb('published_until', 'is', null), eb('published_until', '>', ms)]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async retire(kid, retiredAt, publishedUntil) {
      const set = { retired_at: toMs(retiredAt), published_until: toMs(publishedUntil) };
      return (await updateRows(db, SIGNING_KEYS, 'kid', kid, set, 'retired_at')) > 0;
    },
  };
}

function toSigningKey(row: Selectable<SigningKeysTable>): SigningKeyRecord {
  return {
    kid: row.kid,
    alg: row.alg as SigningAlgorithm,
    publicJwk: fromJsonObject(row.public_jwk, 'signing_keys.public_jwk'),
    sealedPrivateJwk: row.sealed_private_jwk,
    createdAt: toDate(row.created_at),
    retiredAt: toDateOrNull(row.retired_at),
    publishedUntil: toDateOrNull(row.published_until),
  };
}
