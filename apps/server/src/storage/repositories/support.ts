import { type PageRequest, StorageConflictError } from '@idgate/core';
import {
  type Insertable,
  type Kysely,
  type RawBuilder,
  type Selectable,
  type SelectQueryBuilder,
  sql,
  type Updateable,
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

/** The name of a table of the schema. */
export type TableName = keyof Schema & string;

/** A column of the table `T`. */
export type ColumnOf<T extends TableName> = keyof Schema[T] & string;

/**
 * A table as its repository states it once, for the statements below to run over it: its name and
 * the record one of its rows holds. Repositories keep it in a module constant, so a statement run
 * through it costs what the same statement written out does (no closure, the same SQL text).
 */
export interface RecordTable<T extends TableName, R> {
  readonly name: T;
  /** The record of `@idgate/core` that a row holds. */
  readonly toRecord: (row: Selectable<Schema[T]>) => R;
}

/**
 * A {@link RecordTable} whose rows go in under {@link insertUnique}: which field each of its unique
 * constraints protects, and the field a violation names when the database names none of those.
 */
export interface UniqueTable<T extends TableName, R> extends RecordTable<T, R> {
  readonly conflicts: ConflictFields;
  readonly conflictField: string;
}

/**
 * The database as the helpers here address it: by a table and columns named at run time. Their
 * signatures check both against `Schema`; inside, Kysely cannot type a table it is not told.
 */
// biome-ignore lint/suspicious/noExplicitAny: the helpers' own signatures are typed by Schema.
type AnyTables = Kysely<any>;

/** How many rows `table` holds. */
export async function countRows(db: Kysely<Schema>, table: TableName): Promise<number> {
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

/** Inserts one row of `table` under {@link insertUnique}. */
export async function insertRecord<T extends TableName>(
  ctx: RepositoryContext,
  table: UniqueTable<T, unknown>,
  values: Insertable<Schema[T]>,
): Promise<void> {
  await insertUnique(ctx, table.conflicts, table.conflictField, () =>
    ctx.db.insertInto(table.name).values(values).execute(),
  );
}

/** Inserts one row of `table` under {@link insertUnique} and returns the record it holds as stored. */
export async function insertRecordReturning<T extends TableName, R>(
  ctx: RepositoryContext,
  table: UniqueTable<T, R>,
  values: Insertable<Schema[T]>,
): Promise<R> {
  const row = await insertUnique(ctx, table.conflicts, table.conflictField, () =>
    ctx.db.insertInto(table.name).values(values).returningAll().executeTakeFirstOrThrow(),
  );
  return table.toRecord(row);
}

/** The record of the row of `table` whose `column` is `value`, if there is one. */
export async function findRecord<T extends TableName, R>(
  db: Kysely<Schema>,
  table: RecordTable<T, R>,
  column: ColumnOf<T>,
  value: string,
): Promise<R | undefined> {
  const row = await (db as AnyTables)
    .selectFrom(table.name)
    .selectAll()
    .where(column as string, '=', value)
    .executeTakeFirst();
  return row && table.toRecord(row as Selectable<Schema[T]>);
}

/**
 * Sets `values` on the rows of `table` whose `column` is `value` and, with `whileNull`, whose
 * `whileNull` column is still null: a conditional update, which of concurrent callers exactly one
 * gets through (as {@link stampOnce}). Returns how many rows changed.
 */
export async function updateRows<T extends TableName>(
  db: Kysely<Schema>,
  table: RecordTable<T, unknown>,
  column: ColumnOf<T>,
  value: string,
  values: Updateable<Schema[T]>,
  whileNull?: ColumnOf<T>,
): Promise<number> {
  const result = await updateWhere(db, table.name, column, value, values, whileNull).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** {@link updateRows} of the one row `column` finds, answered as the record it holds after the update. */
export async function updateRecord<T extends TableName, R>(
  db: Kysely<Schema>,
  table: RecordTable<T, R>,
  column: ColumnOf<T>,
  value: string,
  values: Updateable<Schema[T]>,
  whileNull?: ColumnOf<T>,
): Promise<R | undefined> {
  const row = await updateWhere(db, table.name, column, value, values, whileNull)
    .returningAll()
    .executeTakeFirst();
  return row && table.toRecord(row as Selectable<Schema[T]>);
}

function updateWhere(
  db: Kysely<Schema>,
  table: TableName,
  column: string,
  value: string,
  values: Record<string, unknown>,
  whileNull: string | undefined,
) {
  const query = (db as AnyTables).updateTable(table).set(values).where(column, '=', value);
  return whileNull === undefined ? query : query.where(whileNull, 'is', null);
}

/** Deletes the rows of `table` whose `column` is `value`; returns how many went. */
export async function deleteRows<T extends TableName>(
  db: Kysely<Schema>,
  table: RecordTable<T, unknown>,
  column: ColumnOf<T>,
  value: string,
): Promise<number> {
  const result = await (db as AnyTables)
    .deleteFrom(table.name as string)
    .where(column as string, '=', value)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
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
export async function purgeExpiredRows<T extends ExpiringTable>(
  db: Kysely<Schema>,
  table: RecordTable<T, unknown>,
  now: Date,
): Promise<number> {
  const result = await db
    .deleteFrom(table.name as ExpiringTable)
    .where('expires_at', '<', toMs(now))
    .executeTakeFirst();
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
export async function stampOnce<T extends StampedTable>(
  db: Kysely<Schema>,
  table: RecordTable<T, unknown>,
  key: string,
  at: Date,
): Promise<boolean> {
  const { key: column, stamp } = STAMPS[table.name];
  const set = { [stamp]: toMs(at) };
  const result = await updateWhere(db, table.name, column, key, set, stamp).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Claims `table`'s row `key` once ({@link stampOnce}'s conditional update) and returns it: undefined
 * when there is no such row, else the record and whether this caller won it (every other caller is
 * told it lost). The winner's row comes back from the update itself (`RETURNING`, on SQLite and
 * PostgreSQL alike), so the usual case is one statement; only a loser reads the row again.
 */
export async function claimOnce<T extends StampedTable, R>(
  db: Kysely<Schema>,
  table: RecordTable<T, R>,
  key: string,
  at: Date,
): Promise<{ won: boolean; record: R } | undefined> {
  const { key: column, stamp } = STAMPS[table.name];
  const set = { [stamp]: toMs(at) };
  const claimed = await updateWhere(db, table.name, column, key, set, stamp)
    .returningAll()
    .executeTakeFirst();
  if (claimed !== undefined) return { won: true, record: table.toRecord(claimed as Selectable<Schema[T]>) };
  const record = await findRecord(db, table, column as ColumnOf<T>, key);
  return record && { won: false, record };
}

/**
 * A text column to order by, compared byte-wise in PostgreSQL too (`collate "C"`) whatever the
 * database's collation: listings order alike on both dialects and in the in-memory storage.
 */
export function inByteOrder(ctx: RepositoryContext, column: string): RawBuilder<unknown> {
  return ctx.dialect === 'postgres' ? sql`${sql.ref(column)} collate "C"` : sql`${sql.ref(column)}`;
}

/** Tables listed in pages, keyed for listing by (`created_at`, `id`), the audit trail by `occurred_at`. */
type PagedTable = 'grants' | 'browser_sessions' | 'api_keys' | 'oauth_clients' | 'audit_events';

/**
 * One keyset page of `query` over `table`, keyed for listing by (`created_at`, `key`, by default
 * `id`; the audit trail by `occurred_at`): the records after `page.after` in that order, at most
 * `page.limit`. Keys compare byte-wise in PostgreSQL too ({@link inByteOrder}), so both dialects
 * and the in-memory storage page alike.
 */
export async function keysetPage<T extends PagedTable, R>(
  ctx: RepositoryContext,
  table: RecordTable<T, R>,
  query: SelectQueryBuilder<Schema, T, object>,
  page: PageRequest,
  key: 'id' | 'client_id' = 'id',
  time: 'created_at' | 'occurred_at' = 'created_at',
): Promise<R[]> {
  const id = inByteOrder(ctx, key);
  const at = sql.ref(time);
  const { after } = page;
  const from =
    after === undefined
      ? query
      : query.where(
          sql<boolean>`(${at} > ${toMs(after.createdAt)} or (${at} = ${toMs(after.createdAt)} and ${id} > ${after.id}))`,
        );
  const rows = await from.orderBy(at).orderBy(id).limit(page.limit).execute();
  // What Kysely makes of `Selectable<Schema[T]>` for an open `T` is the same type, spelt otherwise.
  return (rows as unknown as Selectable<Schema[T]>[]).map(table.toRecord);
}

/** The column that a live row of these tables holds null: a grant not revoked, a session not ended. */
const ENDED = { grants: 'revoked_at', browser_sessions: 'ended_at' } as const;

/**
 * One {@link keysetPage} of the rows of `table` that `userId` holds live: not ended (revoked) and
 * not expired at `now`.
 */
export async function livePageOfUser<T extends keyof typeof ENDED, R>(
  ctx: RepositoryContext,
  table: RecordTable<T, R>,
  userId: string,
  now: Date,
  page: PageRequest,
  column: 'user_id' | 'client_id' = 'user_id',
): Promise<R[]> {
  const live = (ctx.db as AnyTables)
    .selectFrom(table.name)
    .selectAll()
    .where(column, '=', userId)
    .where(ENDED[table.name], 'is', null)
    .where('expires_at', '>', toMs(now));
  return keysetPage<T, R>(ctx, table, live, page);
}

/** Every record of `table`, in the order {@link keysetPage} pages it (creation time, then `key`). */
export async function listInPageOrder<T extends 'api_keys' | 'oauth_clients', R>(
  ctx: RepositoryContext,
  table: RecordTable<T, R>,
  key: 'id' | 'client_id' = 'id',
): Promise<R[]> {
  const rows = await (ctx.db as AnyTables)
    .selectFrom(table.name)
    .selectAll()
    .orderBy('created_at')
    .orderBy(inByteOrder(ctx, key))
    .execute();
  return (rows as Selectable<Schema[T]>[]).map(table.toRecord);
}
