import type { LinkedIdentityRecord, LinkedIdentityRepository } from '@idgate/core';
import { type Selectable, sql } from 'kysely';
import type { LinkedIdentitiesTable } from '../schema.js';
import { fromJsonArray, toCount, toDate, toDateOrNull, toMs, toMsOrNull } from './columns.js';
import { type ConflictFields, insertRowReturning, type RepositoryContext } from './support.js';

const CONFLICTS: ConflictFields = {
  linked_identities_pkey: 'subject',
  'linked_identities.provider, linked_identities.subject': 'subject',
};

export function createLinkedIdentityRepository(ctx: RepositoryContext): LinkedIdentityRepository {
  const { db } = ctx;
  // Byte order in PostgreSQL too, whatever the database's collation, so both dialects list alike.
  const inBytes = (column: 'provider' | 'subject') =>
    ctx.dialect === 'postgres' ? sql`${sql.ref(column)} collate "C"` : sql.ref(column);

  return {
    async link(identity) {
      const row = await insertRowReturning(ctx, 'linked_identities', CONFLICTS, 'subject', {
        provider: identity.provider,
        subject: identity.subject,
        user_id: identity.userId,
        username: identity.username,
        email: identity.email,
        groups: JSON.stringify(identity.groups),
        linked_at: toMs(identity.linkedAt),
        last_login_at: toMsOrNull(identity.lastLoginAt),
      });
      return toIdentity(row);
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
        .orderBy(inBytes('provider'))
        .orderBy(inBytes('subject'))
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
    groups: fromJsonArray(row.groups, 'linked_identities.groups'),
    linkedAt: toDate(row.linked_at),
    lastLoginAt: toDateOrNull(row.last_login_at),
  };
}
