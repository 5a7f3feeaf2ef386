import type { GroupSummary, UserPageQuery, UserPatch, UserRecord, UserRepository } from '@idgate/core';
import { type RawBuilder, type Selectable, sql, type Updateable } from 'kysely';
import type { UsersTable } from '../schema.js';
import { fromFlag, fromJsonArray, toDate, toFlag, toMs } from './columns.js';
import { createGroupRepository } from './groups.js';
import {
  countRows,
  deleteRows,
  findRecord,
  insertRecordReturning,
  type RepositoryContext,
  type UniqueTable,
  updateRecord,
} from './support.js';

const USERS: UniqueTable<'users', UserRecord> = {
  name: 'users',
  toRecord: toUser,
  conflicts: { users_username_lower_unique: 'username', users_pkey: 'id', 'users.id': 'id' },
  conflictField: 'username',
};

// Enough to tell one match from several; nobody needs the full list of a shared address.
const MAX_EMAIL_MATCHES = 10;

export function createUserRepository(ctx: RepositoryContext): UserRepository {
  const { db } = ctx;
  // Every group a user is in has a row: a user's new groups are created with it.
  const groups = createGroupRepository(ctx);
  // Matches the unique index, so lookups and uniqueness agree on what "the same username" is.
  const folded = sql<string>`lower(username)`;
  // Byte order in PostgreSQL too, whatever the database's collation, so both dialects list alike.
  const sortKey = ctx.dialect === 'postgres' ? sql`lower(username) collate "C"` : folded;

  return {
    async create(user) {
      const createdAt = toMs(user.createdAt);
      const created = await insertRecordReturning(ctx, USERS, {
        id: user.id,
        username: user.username,
        email: user.email,
        display_name: user.displayName,
        groups: JSON.stringify(user.groups),
        password_hash: user.passwordHash,
        disabled: toFlag(user.disabled ?? false),
        created_at: createdAt,
        updated_at: createdAt,
      });
      await groups.ensure(created.groups, user.createdAt);
      return created;
    },

    findById: (id) => findRecord(db, USERS, 'id', id),

    async findByUsername(username) {
      const row = await db
        .selectFrom('users')
        .selectAll()
        .where(folded, '=', sql<string>`lower(${username})`)
        .executeTakeFirst();
      return row && toUser(row);
    },

    async findByEmail(email) {
      const rows = await db
        .selectFrom('users')
        .selectAll()
        .where(sql<string>`lower(email)`, '=', sql<string>`lower(${email})`)
        .orderBy(sortKey)
        .limit(MAX_EMAIL_MATCHES)
        .execute();
      return rows.map(toUser);
    },

    async list() {
      const rows = await db.selectFrom('users').selectAll().orderBy(sortKey).execute();
      return rows.map(toUser);
    },

    async update(id, patch) {
      const updated = await updateRecord(db, USERS, 'id', id, toChanges(patch));
      if (updated !== undefined && patch.groups !== undefined)
        await groups.ensure(patch.groups, patch.updatedAt);
      return updated;
    },

    async page(query) {
      let select = db.selectFrom('users').selectAll();
      for (const condition of pageConditions(ctx.dialect, sortKey, query)) select = select.where(condition);
      const rows = await select.orderBy(sortKey).limit(query.limit).execute();
      return rows.map(toUser);
    },

    async groups(query) {
      // One row per (user, group): a user's groups are distinct, so count(*) counts users.
      const pg = ctx.dialect === 'postgres';
      const from = pg
        ? sql`users cross join lateral jsonb_array_elements_text(users.groups::jsonb) as g(name)`
        : sql`users, json_each(users.groups) as g`;
      const name = pg ? sql`g.name collate "C"` : sql`g.value`;
      const conditions = [sql`1 = 1`];
      if (query.after !== undefined) conditions.push(sql`${name} > ${query.after}`);
      if (query.name !== undefined) conditions.push(sql`${name} = ${query.name}`);
      const result = await sql<{ name: string; members: number | string }>`
        select ${name} as name, count(*) as members from ${from}
        where ${sql.join(conditions, sql` and `)}
        group by ${name} order by ${name} limit ${query.limit}`.execute(db);
      return result.rows.map((row): GroupSummary => ({ name: row.name, members: Number(row.members) }));
    },

    async remove(id) {
      return (await deleteRows(db, USERS, 'id', id)) > 0;
    },

    count: () => countRows(db, 'users'),
  };
}

/** `%text%` for LIKE, its own `%`, `_` and `\` taken literally. */
const containing = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The WHERE conditions of a page of users. */
function pageConditions(
  dialect: RepositoryContext['dialect'],
  sortKey: RawBuilder<unknown>,
  query: UserPageQuery,
): RawBuilder<boolean>[] {
  const conditions: RawBuilder<boolean>[] = [];
  if (query.after !== undefined) conditions.push(sql<boolean>`${sortKey} > ${query.after}`);
  if (query.group !== undefined) {
    conditions.push(
      dialect === 'postgres'
        ? sql<boolean>`exists (select 1 from jsonb_array_elements_text(users.groups::jsonb) as g(name) where g.name = ${query.group})`
        : sql<boolean>`exists (select 1 from json_each(users.groups) as g where g.value = ${query.group})`,
    );
  }
  if (query.text !== undefined) {
    const like = containing(query.text);
    conditions.push(
      sql<boolean>`(lower(username) like ${like} escape '\\' or lower(coalesce(email, '')) like ${like} escape '\\' or lower(coalesce(display_name, '')) like ${like} escape '\\')`,
    );
  }
  if (query.status === 'disabled') conditions.push(sql<boolean>`disabled = 1`);
  if (query.status === 'active' || query.status === 'locked') {
    const locked = lockedUsernames(query.lock);
    conditions.push(
      query.status === 'locked'
        ? sql<boolean>`lower(username) in (${locked})`
        : sql<boolean>`disabled = 0 and lower(username) not in (${locked})`,
    );
  }
  return conditions;
}

/**
 * The lower-cased usernames the login throttle holds locked at `lock.now`: the latest failure
 * since the latest success (or unlock) is less than a window old, and the window ending at it
 * holds at least `maxFailures` failures since that success — as `LoginThrottle` decides, in SQL.
 */
function lockedUsernames(lock: UserPageQuery['lock']): RawBuilder<string> {
  if (lock === undefined) return sql<string>`select username from users where 1 = 0`;
  const windowMs = lock.windowSeconds * 1000;
  const since = lock.now.getTime() - windowMs;
  // Local accounts are the provider `password`'s: another provider's bob is another account.
  return sql<string>`select f.username from login_attempts f
    where f.success = 0 and f.provider = 'password'
      and f.created_at > coalesce((select max(s.created_at) from login_attempts s
        where s.username = f.username and s.provider = 'password' and s.success = 1), ${Number.MIN_SAFE_INTEGER})
      and f.created_at >= (select max(l.created_at) from login_attempts l
        where l.username = f.username and l.provider = 'password' and l.success = 0) - ${windowMs}
    group by f.username
    having max(f.created_at) > ${since} and count(*) >= ${lock.maxFailures}`;
}

function toChanges(patch: UserPatch): Updateable<UsersTable> {
  const changes: Updateable<UsersTable> = { updated_at: toMs(patch.updatedAt) };
  if (patch.email !== undefined) changes.email = patch.email;
  if (patch.displayName !== undefined) changes.display_name = patch.displayName;
  if (patch.groups !== undefined) changes.groups = JSON.stringify(patch.groups);
  if (patch.passwordHash !== undefined) changes.password_hash = patch.passwordHash;
  if (patch.disabled !== undefined) changes.disabled = toFlag(patch.disabled);
  return changes;
}

function toUser(row: Selectable<UsersTable>): UserRecord {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    displayName: row.display_name,
    groups: fromJsonArray(row.groups, 'users.groups'),
    passwordHash: row.password_hash,
    disabled: fromFlag(row.disabled),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}
