import type { NotBeforeRecord, NotBeforeRepository, NotBeforeScope } from '@idgate/core';
import { type Selectable, sql } from 'kysely';
import type { NotBeforeTable } from '../schema.js';
import { toDate, toMs } from './columns.js';
import { inByteOrder, type RepositoryContext } from './support.js';

export function createNotBeforeRepository(ctx: RepositoryContext): NotBeforeRepository {
  const { db } = ctx;
  const find = async (scope: NotBeforeScope, subject: string) => {
    const row = await db
      .selectFrom('not_before')
      .selectAll()
      .where('scope', '=', scope)
      .where('subject', '=', subject)
      .executeTakeFirst();
    return row === undefined ? undefined : toNotBefore(row);
  };
  return {
    async raise(entry) {
      // One statement: two administrators raising it at once keep the later instant.
      await db
        .insertInto('not_before')
        .values({
          scope: entry.scope,
          subject: entry.subject,
          not_before: toMs(entry.notBefore),
          set_at: toMs(entry.setAt),
        })
        .onConflict((oc) =>
          oc.columns(['scope', 'subject']).doUpdateSet({
            not_before: sql<number>`case when excluded.not_before > not_before.not_before then excluded.not_before else not_before.not_before end`,
            set_at: sql<number>`excluded.set_at`,
          }),
        )
        .execute();
      const stored = await find(entry.scope, entry.subject);
      if (stored === undefined) throw new Error('the not-before just written is missing');
      return stored;
    },

    find,

    async list() {
      const rows = await db
        .selectFrom('not_before')
        .selectAll()
        .orderBy(sql`case scope when 'global' then 0 when 'client' then 1 else 2 end`)
        .orderBy(inByteOrder(ctx, 'subject'))
        .execute();
      return rows.map(toNotBefore);
    },

    async latestFor(clientId, userId) {
      const row = await db
        .selectFrom('not_before')
        .select((eb) => eb.fn.max('not_before').as('latest'))
        .where((eb) =>
          eb.or([
            eb.and([eb('scope', '=', 'global'), eb('subject', '=', '')]),
            ...(clientId === null
              ? []
              : [eb.and([eb('scope', '=', 'client'), eb('subject', '=', clientId)])]),
            ...(userId === null ? [] : [eb.and([eb('scope', '=', 'user'), eb('subject', '=', userId)])]),
          ]),
        )
        .executeTakeFirst();
      return row?.latest == null ? undefined : toDate(row.latest);
    },
  };
}

function toNotBefore(row: Selectable<NotBeforeTable>): NotBeforeRecord {
  return {
    scope: row.scope as NotBeforeScope,
    subject: row.subject,
    notBefore: toDate(row.not_before),
    setAt: toDate(row.set_at),
  };
}
