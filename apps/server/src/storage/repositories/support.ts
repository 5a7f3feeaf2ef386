import { type PageRequest, StorageConflictError } from '@idgate/core';
import {
  type Insertable,
  type Kysely,
  type RawBuilder,
  type Selectable,
  type SelectQueryBuilder,
  sql,
} from 'kysely';
import type { DialectName } from '../database.js';
import type { Schema } from '../schema.js';
import { toCount, toMs } from './columns.js';

/** What every repository runs on: a database or an open transaction on it. */
export interface RepositoryContext {
  /** The root Kysely instance, or a Kysely transaction (which extends it). */
  readonly db: Kysely<Schema>;
  readonly dialect: DialectName;
  readonly inTransaction: boolean;
}

/**
 * Which field a unique constraint protects, keyed by how the database names it: the constraint or
 * index name (PostgreSQL, and SQLite for expression indexes) or `table.column` (SQLite).
 */
export type ConflictFields = Readonly<Record<string, string>>;

/** How many rows `table` holds. */
export async function countRows(db: Kysely<Schema>, table: keyof Schema & string): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return toCount(row);
}

/**
 * Runs an insert, turning a unique-constraint violation into `StorageConflictError(field)`.
 * On PostgreSQL inside a transaction the insert runs under a savepoint: a failed statement would
 * otherwise abort the whole transaction, and a caller that catches the conflict could not go on
 * (SQLite keeps the transaction usable, so both dialects behave alike).
 */
export async function insertUnique<T>(
  ctx: RepositoryContext,
  fields: ConflictFields,
  fallbackField: string,
  insert: () => Promise<T>,
): Promise<T> {
  try {
    return await underSavepoint(ctx, insert);
  } catch (error) {
    const constraint = uniqueViolation(error);
    if (constraint === undefined) throw error;
    throw new StorageConflictError(fields[constraint] ?? fallbackField);
  }
}

/** Inserts one row into `table` under {@link insertUnique}. */
export async function insertRow<T extends keyof Schema & string>(
  ctx: RepositoryContext,
  table: T,
  fields: ConflictFields,
  fallbackField: string,
  values: Insertable<Schema[T]>,
): Promise<void> {
  await insertUnique(ctx, fields, fallbackField, () => ctx.db.insertInto(table).values(values).execute());
}

/** Inserts one row into `table` under {@link insertUnique} and returns it as stored. */
export async function insertRowReturning<T extends keyof Schema & string>(
  ctx: RepositoryContext,
  table: T,
  fields: ConflictFields,
  fallbackField: string,
  values: Insertable<Schema[T]>,
): Promise<Selectable<Schema[T]>> {
  return insertUnique(ctx, fields, fallbackField, () =>
    ctx.db.insertInto(table).values(values).returningAll().executeTakeFirstOrThrow(),
  );
}

/**
 * Inserts rows whose only unique key is `key`, drawn at random (ids, hashes of random secrets):
 * `on conflict (key) do nothing`, and a row that did not go in is `StorageConflictError(field)`.
 * No statement fails on a duplicate, so inside a PostgreSQL transaction no savepoint is needed
 * (the transaction stays usable, as with {@link insertUnique}) and each insert is one round trip
 * instead of three. With `returning`, answers the single row as stored.
 */
export async function insertNew<T extends 'grants' | 'refresh_tokens' | 'audit_events'>(
  ctx: RepositoryContext,
  table: T,
  key: 'id' | 'hash',
  field: string,
  rows: Insertable<Schema[T]>[],
): Promise<void> {
  const result = await ctx.db
    .insertInto(table as 'grants')
    .values(rows as Insertable<Schema['grants']>[])
    .onConflict((conflict) => conflict.column(key as 'id').doNothing())
    .executeTakeFirst();
  if (Number(result.numInsertedOrUpdatedRows ?? 0n) < rows.length) throw new StorageConflictError(field);
}

/** {@link insertNew} of one row, answered as stored. */
export async function insertNewReturning<T extends 'grants'>(
  ctx: RepositoryContext,
  table: T,
  key: 'id',
  field: string,
  values: Insertable<Schema[T]>,
): Promise<Selectable<Schema[T]>> {
  const row = await ctx.db
    .insertInto(table)
    .values(values)
    .onConflict((conflict) => conflict.column(key).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (row === undefined) throw new StorageConflictError(field);
  return row;
}

let savepoints = 0;

async function underSavepoint<T>(ctx: RepositoryContext, work: () => Promise<T>): Promise<T> {
  if (!ctx.inTransaction || ctx.dialect !== 'postgres') return work();
  const name = sql.id(`idgate_sp_${++savepoints}`);
  await sql`savepoint ${name}`.execute(ctx.db);
  let result: T;
  try {
    result = await work();
  } catch (error) {
    // If even this fails the transaction is unusable anyway; the original error says why.
    await sql`rollback to savepoint ${name}`.execute(ctx.db).catch(() => {});
    throw error;
  }
  await sql`release savepoint ${name}`.execute(ctx.db);
  return result;
}

/** The violated constraint's name when `error` is a unique violation, else undefined. */
function uniqueViolation(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, constraint, message } = error as { code?: unknown; constraint?: unknown; message?: unknown };
  if (code === '23505') return typeof constraint === 'string' ? constraint : '';
  if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    // "UNIQUE constraint failed: users.id" or "UNIQUE constraint failed: index 'users_username_lower_unique'"
    const detail = typeof message === 'string' ? message.replace(/^.*constraint failed: /, '') : '';
    return /^index '(.+)'$/.exec(detail)?.[1] ?? detail;
  }
  return undefined;
}

/** Tables whose rows lapse at `expires_at` and are purged once it is past. */
type ExpiringTable =
  | 'authorization_codes'
  | 'refresh_tokens'
  | 'login_transactions'
  | 'interactions'
  | 'device_authorizations';

/**
 * Deletes the rows of `table` that expired before `now` (`<`: a row expiring at `now` stays for
 * this instant) and returns how many went.
 */
export async function purgeExpiredRows(db: Kysely<Schema>, table: ExpiringTable, now: Date): Promise<number> {
  const result = await db.deleteFrom(table).where('expires_at', '<', toMs(now)).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * The rows that are stamped once: each names the column that finds the row and the nullable
 * timestamp column that, once set, stays set.
 */
const STAMPS = {
  authorization_codes: { key: 'hash', stamp: 'consumed_at' },
  refresh_tokens: { key: 'hash', stamp: 'used_at' },
  login_transactions: { key: 'state_hash', stamp: 'consumed_at' },
  browser_sessions: { key: 'id', stamp: 'ended_at' },
} as const satisfies { [T in keyof Schema]?: { key: keyof Schema[T]; stamp: keyof Schema[T] } };

type StampedTable = keyof typeof STAMPS;

/**
 * Sets the stamp column of `table`'s row `key` to `at` if it is still null, and tells whether this
 * call did. The conditional update is the whole decision: the database lets exactly one statement
 * move the column from null (PostgreSQL re-checks the condition after a concurrent update commits;
 * SQLite runs writes one at a time), so checking first and writing after would race.
 */
export async function stampOnce(
  db: Kysely<Schema>,
  table: StampedTable,
  key: string,
  at: Date,
): Promise<boolean> {
  const { key: keyColumn, stamp } = STAMPS[table];
  const result = await db
    .updateTable(table)
    .set({ [stamp]: toMs(at) })
    .where(keyColumn, '=', key)
    .where(stamp, 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Claims `table`'s row `key` once ({@link stampOnce}'s conditional update) and returns it: undefined
 * when there is no such row, else the row and whether this caller won it (every other caller is
 * told it lost). The winner's row comes back from the update itself (`RETURNING`, on SQLite and
 * PostgreSQL alike), so the usual case is one statement; only a loser reads the row again.
 */
export async function claimOnce<T extends StampedTable>(
  db: Kysely<Schema>,
  table: T,
  key: string,
  at: Date,
): Promise<{ won: boolean; row: Selectable<Schema[T]> } | undefined> {
  const { key: keyColumn, stamp } = STAMPS[table as StampedTable];
  const claimed = await db
    .updateTable(table as StampedTable)
    .set({ [stamp]: toMs(at) })
    .where(keyColumn, '=', key)
    .where(stamp, 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (claimed !== undefined) return { won: true, row: claimed as Selectable<Schema[T]> };
  const row = await db
    .selectFrom(table as StampedTable)
    .selectAll()
    .where(keyColumn, '=', key)
    .executeTakeFirst();
  return row && { won: false, row: row as Selectable<Schema[T]> };
}

/**
 * A text column to order by, compared byte-wise in PostgreSQL too (`collate "C"`) whatever the
 * database's collation: listings order alike on both dialects and in the in-memory storage.
 */
export function inByteOrder(ctx: RepositoryContext, column: string): RawBuilder<unknown> {
  return ctx.dialect === 'postgres' ? sql`${sql.ref(column)} collate "C"` : sql`${sql.ref(column)}`;
}

/**
 * One keyset page of `query` over a table keyed for listing by (`created_at`, `key`, by default
 * `id`; the audit trail by `occurred_at`): the rows after `page.after` in that order, at most
 * `page.limit`. Keys compare byte-wise in PostgreSQL too (`collate "C"`), whatever the database's
 * collation, so both dialects and the in-memory storage page alike.
 */
export function keysetPage<
  T extends 'grants' | 'browser_sessions' | 'api_keys' | 'oauth_clients' | 'audit_events',
  O,
>(
  ctx: RepositoryContext,
  query: SelectQueryBuilder<Schema, T, O>,
  page: PageRequest,
  key: 'id' | 'client_id' = 'id',
  time: 'created_at' | 'occurred_at' = 'created_at',
): SelectQueryBuilder<Schema, T, O> {
  const id = ctx.dialect === 'postgres' ? sql`${sql.ref(key)} collate "C"` : sql.ref(key);
  const at = sql.ref(time);
  const { after } = page;
  const from =
    after === undefined
      ? query
      : query.where(
          sql<boolean>`(${at} > ${toMs(after.createdAt)} or (${at} = ${toMs(after.createdAt)} and ${id} > ${after.id}))`,
        );
  return from.orderBy(at).orderBy(id).limit(page.limit);
}
