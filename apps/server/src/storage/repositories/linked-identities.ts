import type { LinkedIdentityRecord, LinkedIdentityRepository } from '@idgate/core';
import type { Selectable } from 'kysely';
import type { LinkedIdentitiesTable } from '../schema.js';
import {
  fromFlag,
  fromJsonArray,
  toCount,
  toDate,
  toDateOrNull,
  toFlag,
  toMs,
  toMsOrNull,
} from './columns.js';
import { inByteOrder, insertRecordReturning, type RepositoryContext, type UniqueTable } from './support.js';

const IDENTITIES: UniqueTable<'linked_identities', LinkedIdentityRecord> = {
  name: 'linked_identities',
  toRecord: toIdentity,
  conflicts: {
    linked_identities_pkey: 'subject',
    'linked_identities.provider, linked_identities.subject': 'subject',
  },
  conflictField: 'subject',
};

export function createLinkedIdentityRepository(ctx: RepositoryContext): LinkedIdentityRepository {
  const { db } = ctx;
  return {
    async link(identity) {
      return insertRecordReturning(ctx, IDENTITIES, {
        provider: identity.provider,
        subject: identity.subject,
        user_id: identity.userId,
        username: identity.username,
        email: identity.email,
        email_verified: toFlag(identity.emailVerified === true),
        groups: JSON.stringify(identity.groups),
        linked_at: toMs(identity.linkedAt),
        last_login_at: toMsOrNull(identity.lastLoginAt),
      });
    },

    async find(provider, subject) {
      const row = await db
        .selectFrom('linked_identities')
        .selectAll()
        .where('provider', '=', provider)
        .where('subject', '=', subject)
        .executeTakeFirst();
      return row && toIdentity(row);
    },

    async listByUser(userId) {
      const rows = await db
        .selectFrom('linked_identities')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy(inByteOrder(ctx, 'provider'))
        .orderBy(inByteOrder(ctx, 'subject'))
        .execute();
      return rows.map(toIdentity);
    },

    async countByProvider(provider) {
      const row = await db
        .selectFrom('linked_identities')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('provider', '=', provider)
        .executeTakeFirstOrThrow();
      return toCount(row);
    },

    async recordSignIn(provider, subject, fields) {
      await db
        .updateTable('linked_identities')
        .set({
          username: fields.username,
          email: fields.email,
          email_verified: toFlag(fields.emailVerified === true),
          groups: JSON.stringify(fields.groups),
          last_login_at: toMs(fields.at),
        })
        .where('provider', '=', provider)
        .where('subject', '=', subject)
        .execute();
    },

    async unlink(provider, subject) {
      const result = await db
        .deleteFrom('linked_identities')
        .where('provider', '=', provider)
        .where('subject', '=', subject)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}

function toIdentity(row: Selectable<LinkedIdentitiesTable>): LinkedIdentityRecord {
  return {
    provider: row.provider,
    subject: row.subject,
    userId: row.user_id,
    username: row.username,
    email: row.email,
    // Only when set, as the record leaves it out for false.
    ...(fromFlag(row.email_verified) ? { emailVerified: true } : {}),
    groups: fromJsonArray(row.groups, 'linked_identities.groups'),
    linkedAt: toDate(row.linked_at),
    lastLoginAt: toDateOrNull(row.last_login_at),
  };
}
