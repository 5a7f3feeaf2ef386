import type { ConsentRepository } from '@idgate/core';
import { fromJsonArray, toDate, toMs } from './columns.js';
import type { RepositoryContext } from './support.js';

export function createConsentRepository(ctx: RepositoryContext): ConsentRepository {
  const { db } = ctx;
  return {
    async find(userId, clientId) {
      const row = await db
        .selectFrom('consents')
        .selectAll()
        .where('user_id', '=', userId)
        .where('client_id', '=', clientId)
        .executeTakeFirst();
      return (
        row && {
          userId: row.user_id,
          clientId: row.client_id,
          scope: fromJsonArray(row.scope, 'consents.scope'),
          resources: row.resources === null ? null : fromJsonArray(row.resources, 'consents.resources'),
          grantedAt: toDate(row.granted_at),
        }
      );
    },

    async save(consent) {
      // An upsert, so two concurrent saves cannot collide on the primary key.
      await db
        .insertInto('consents')
        .values({
          user_id: consent.userId,
          client_id: consent.clientId,
          scope: JSON.stringify(consent.scope),
          resources: consent.resources == null ? null : JSON.stringify(consent.resources),
          granted_at: toMs(consent.grantedAt),
        })
        .onConflict((oc) =>
          oc.columns(['user_id', 'client_id']).doUpdateSet((eb) => ({
            scope: eb.ref('excluded.scope'),
            resources: eb.ref('excluded.resources'),
            granted_at: eb.ref('excluded.granted_at'),
          })),
        )
        .execute();
    },
  };
}
