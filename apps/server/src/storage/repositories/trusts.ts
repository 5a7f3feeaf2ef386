import type { SubjectTokenUseRepository, TrustRecord, TrustRepository } from '@idgate/core';
import type { Selectable } from 'kysely';
import type { TrustsTable } from '../schema.js';
import { toDate, toMs } from './columns.js';
import {
  deleteRows,
  findRecord,
  inByteOrder,
  insertRecordReturning,
  type RepositoryContext,
  type UniqueTable,
} from './support.js';

const TRUSTS: UniqueTable<'trusts', TrustRecord> = {
  name: 'trusts',
  toRecord: toTrust,
  conflicts: { trusts_pkey: 'name', 'trusts.name': 'name' },
  conflictField: 'name',
};

function toRow(trust: TrustRecord) {
  return {
    name: trust.name.toLowerCase(),
    issuer: trust.issuer,
    audience: trust.audience,
    jwks: trust.jwks === null ? null : JSON.stringify(trust.jwks),
    discovery_url: trust.discoveryUrl,
    condition: trust.condition,
    username: trust.username,
    groups: JSON.stringify(trust.groups),
    clusters: JSON.stringify(trust.clusters),
    max_ttl: trust.maxTtl,
    created_at: toMs(trust.createdAt),
    updated_at: toMs(trust.updatedAt),
  };
}

export function createTrustRepository(ctx: RepositoryContext): TrustRepository {
  const { db } = ctx;
  const fold = (name: string) => name.toLowerCase();
  return {
    async create(trust) {
      return insertRecordReturning(ctx, TRUSTS, toRow(trust));
    },

    async findByName(name) {
      return findRecord(db, TRUSTS, 'name', fold(name));
    },

    async list() {
      const rows = await db.selectFrom('trusts').selectAll().orderBy(inByteOrder(ctx, 'name')).execute();
      return rows.map(toTrust);
    },

    async update(trust) {
      const { name, created_at: _created, ...fields } = toRow(trust);
      const result = await db.updateTable('trusts').set(fields).where('name', '=', name).executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return undefined;
      return findRecord(db, TRUSTS, 'name', name);
    },

    async remove(name) {
      return (await deleteRows(db, TRUSTS, 'name', fold(name))) > 0;
    },
  };
}

export function createSubjectTokenUseRepository(ctx: RepositoryContext): SubjectTokenUseRepository {
  const { db } = ctx;
  return {
    async spend(use, now) {
      // An expired use of the same jti may still be there (not yet swept): it is replaced, in
      // one statement, so two replicas spending the same jti at once cannot both succeed.
      const result = await db
        .insertInto('subject_token_uses')
        .values({ issuer: use.issuer, jti: use.jti, expires_at: toMs(use.expiresAt) })
        .onConflict((oc) =>
          oc
            .columns(['issuer', 'jti'])
            .doUpdateSet({ expires_at: toMs(use.expiresAt) })
            .where('subject_token_uses.expires_at', '<=', toMs(now)),
        )
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    },

    async purgeExpired(now) {
      const result = await db
        .deleteFrom('subject_token_uses')
        .where('expires_at', '<=', toMs(now))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

function toTrust(row: Selectable<TrustsTable>): TrustRecord {
  return {
    name: row.name,
    issuer: row.issuer,
    audience: row.audience,
    jwks: row.jwks === null ? null : JSON.parse(row.jwks),
    discoveryUrl: row.discovery_url,
    condition: row.condition,
    username: row.username,
    groups: JSON.parse(row.groups) as string[],
    clusters: JSON.parse(row.clusters) as string[],
    maxTtl: Number(row.max_ttl),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}
