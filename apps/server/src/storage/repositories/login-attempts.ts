import { ADDRESS_LIFT, type LoginAttemptRecord, type LoginAttemptRepository } from '@idgate/core';
import { type ExpressionBuilder, type Selectable, sql } from 'kysely';
import type { LoginAttemptsTable, Schema } from '../schema.js';
import { fromFlag, toDate, toDateOrNull, toFlag, toMs } from './columns.js';
import { inByteOrder, insertRecord, type RepositoryContext, type UniqueTable } from './support.js';

const ATTEMPTS: UniqueTable<'login_attempts', LoginAttemptRecord> = {
  name: 'login_attempts',
  toRecord: toAttempt,
  conflicts: { login_attempts_pkey: 'id', 'login_attempts.id': 'id' },
  conflictField: 'id',
};

// Usernames are folded here, in JavaScript, on the way in and in every lookup: the plain
// (username, created_at) index then serves the queries, and both dialects fold alike (SQLite's
// lower() is ASCII-only, and what people type at a login form need not be ASCII).
const fold = (username: string): string => username.toLowerCase();

type Attempts = ExpressionBuilder<Schema, 'login_attempts'>;

/** When the block of `address` was last lifted (see ADDRESS_LIFT): a lift of it or of every address. */
const liftedAt = (eb: Attempts, address: Parameters<Attempts['val']>[0] | ReturnType<Attempts['ref']>) =>
  eb
    .selectFrom('login_attempts as l')
    .select((l) => l.fn.max('l.created_at').as('t'))
    .where('l.username', '=', ADDRESS_LIFT.username)
    .where('l.success', '=', 1)
    .where((l) =>
      l.or([
        l('l.source_address', '=', address as never),
        l('l.source_address', '=', ADDRESS_LIFT.everyAddress),
      ]),
    );

export function createLoginAttemptRepository(ctx: RepositoryContext): LoginAttemptRepository {
  const { db } = ctx;

  /** Count and latest instant of the failures the filter keeps, since `since`, in one statement. */
  const failures = async (filter: (eb: Attempts) => ReturnType<Attempts['and']>, since: Date) => {
    const row = await db
      .selectFrom('login_attempts')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('created_at').as('latest')])
      .where('success', '=', 0)
      .where('created_at', '>=', toMs(since))
      .where(filter)
      .executeTakeFirstOrThrow();
    return { count: Number(row.n), latest: toDateOrNull(row.latest ?? null) };
  };

  return {
    async record(attempt) {
      await insertRecord(ctx, ATTEMPTS, {
        id: attempt.id,
        username: fold(attempt.username),
        user_id: attempt.userId,
        source_address: attempt.sourceAddress,
        provider: attempt.provider,
        success: toFlag(attempt.success),
        reason: attempt.reason,
        created_at: toMs(attempt.createdAt),
        client_id: attempt.clientId ?? null,
        familiar: toFlag(attempt.familiar ?? false),
      });
    },

    failuresForUsername(username, since, options = {}) {
      const folded = fold(username);
      const { provider, familiar, reason } = options;
      return failures((eb) => {
        // Only failures after the latest success count: a success resets the counter.
        let lastSuccess = eb
          .selectFrom('login_attempts as s')
          .select((s) => s.fn.max('s.created_at').as('t'))
          .where('s.username', '=', folded)
          .where('s.success', '=', 1);
        if (provider !== undefined) lastSuccess = lastSuccess.where('s.provider', '=', provider);
        return eb.and([
          eb('username', '=', folded),
          ...(provider === undefined ? [] : [eb('provider', '=', provider)]),
          ...(familiar === undefined ? [] : [eb('familiar', '=', toFlag(familiar))]),
          ...(reason === undefined ? [] : [eb('reason', '=', reason)]),
          eb('created_at', '>', eb.fn.coalesce(lastSuccess, eb.val(Number.MIN_SAFE_INTEGER))),
        ]);
      }, since);
    },

    failuresFromAddress(sourceAddress, since, options = {}) {
      const { channel } = options;
      return failures(
        (eb) =>
          eb.and([
            eb('source_address', '=', sourceAddress),
            ...(channel === undefined ? [] : [eb('client_id', channel === 'grant' ? 'is not' : 'is', null)]),
            eb(
              'created_at',
              '>',
              eb.fn.coalesce(liftedAt(eb, eb.val(sourceAddress)), eb.val(Number.MIN_SAFE_INTEGER)),
            ),
          ]),
        since,
      );
    },

    async failingAddresses(since, minimum, limit) {
      const channel = sql<number>`case when client_id is null then 0 else 1 end`;
      const rows = await db
        .selectFrom('login_attempts')
        .select((eb) => [
          'source_address',
          channel.as('grant_channel'),
          eb.fn.countAll<number>().as('n'),
          eb.fn.max('created_at').as('latest'),
        ])
        .where('success', '=', 0)
        .where('created_at', '>=', toMs(since))
        .where((eb) =>
          eb(
            'created_at',
            '>',
            eb.fn.coalesce(
              liftedAt(eb, eb.ref('login_attempts.source_address')),
              eb.val(Number.MIN_SAFE_INTEGER),
            ),
          ),
        )
        .groupBy(['source_address', channel])
        .having((eb) => eb.fn.countAll(), '>=', minimum)
        .orderBy('n', 'desc')
        .orderBy(inByteOrder(ctx, 'source_address'))
        .limit(Math.max(0, Math.trunc(limit)))
        .execute();
      return rows.map((row) => ({
        address: row.source_address,
        channel: Number(row.grant_channel) === 1 ? ('grant' as const) : ('browser' as const),
        count: Number(row.n),
        latest: toDate(row.latest as number),
      }));
    },

    failuresForClient(clientId, since) {
      return failures((eb) => eb.and([eb('client_id', '=', clientId)]), since);
    },

    async hasSucceededFrom(username, provider, sourceAddress) {
      const row = await db
        .selectFrom('login_attempts')
        .select('id')
        .where('username', '=', fold(username))
        .where('provider', '=', provider)
        .where('source_address', '=', sourceAddress)
        .where('success', '=', 1)
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    async listByUsername(username, limit) {
      const rows = await db
        .selectFrom('login_attempts')
        .selectAll()
        .where('username', '=', fold(username))
        .orderBy('created_at', 'desc')
        .orderBy(sql`${inByteOrder(ctx, 'id')} desc`)
        .limit(Math.max(0, Math.trunc(limit)))
        .execute();
      return rows.map(toAttempt);
    },
  };
}

function toAttempt(row: Selectable<LoginAttemptsTable>): LoginAttemptRecord {
  return {
    id: row.id,
    username: row.username,
    userId: row.user_id,
    sourceAddress: row.source_address,
    provider: row.provider,
    success: fromFlag(row.success),
    reason: row.reason,
    createdAt: toDate(row.created_at),
    clientId: row.client_id,
    familiar: fromFlag(row.familiar),
  };
}
