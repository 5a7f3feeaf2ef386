import type { UserPatch, UserRecord, UserRepository } from '@idgate/core';
import { type Selectable, sql, type Updateable } from 'kysely';
import type { UsersTable } from '../schema.js';
import {
  type ConflictFields,
  countRows,
  fromFlag,
  fromJsonArray,
  insertRowReturning,
  type RepositoryContext,
  toDate,
  toFlag,
  toMs,
} from './support.js';

const CONFLICTS: ConflictFields = {
  users_username_lower_unique: 'username',
  users_pkey: 'id',
  'users.id': 'id',
};

// Enough to tell one match from several; nobody needs the full list of a shared address.
const MAX_EMAIL_MATCHES = 10;

export function createUserRepository(ctx: RepositoryContext): UserRepository {
  const { db } = ctx;
  // Matches the unique index, so lookups and uniqueness agree on what "the same username" is.
  const folded = sql<string>`lower(username)`;
  // Byte order in PostgreSQL too, whatever the database's collation, so both dialects list alike.
  const sortKey = ctx.dialect === 'postgres' ? sql`lower(username) collate "C"` : folded;

  return {
    async create(user) {
      const createdAt = toMs(user.createdAt);
      const row = await insertRowReturning(ctx, 'users', CONFLICTS, 'username', {
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
      return toUser(row);
    },

    async findById(id) {
      const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toUser(row);
    },

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
      const row = await db
        .updateTable('users')
        .set(toChanges(patch))
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row && toUser(row);
    },

    count: () => countRows(db, 'users'),
  };
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
