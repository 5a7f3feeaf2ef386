import type { GroupRecord, GroupRepository, StoredGroup } from '@idgate/core';
import { type Selectable, sql, type Updateable } from 'kysely';
import type { GroupsTable } from '../schema.js';
import { fromFlag, toDate, toFlag, toMs } from './columns.js';
import {
  deleteRows,
  inByteOrder,
  insertRecordReturning,
  insertUnique,
  type RepositoryContext,
  type UniqueTable,
  updateRecord,
} from './support.js';

const GROUPS: UniqueTable<'groups', GroupRecord> = {
  name: 'groups',
  toRecord: toGroup,
  conflicts: { groups_pkey: 'name', 'groups.name': 'name' },
  conflictField: 'name',
};

/** Groups (see `GroupRepository`): the rows, and their members counted from `users.groups`. */
export function createGroupRepository(ctx: RepositoryContext): GroupRepository {
  const { db } = ctx;
  // How many users name the group of the outer row `groups.name` (a user's groups are distinct).
  const members =
    ctx.dialect === 'postgres'
      ? sql<number | string>`(select count(*) from users where users.groups::jsonb ? "groups".name)`
      : sql<
          number | string
        >`(select count(*) from users, json_each(users.groups) as g where g.value = "groups".name)`;
  const withMembers = (row: Selectable<GroupsTable> & { members: number | string }): StoredGroup => ({
    ...toGroup(row),
    members: Number(row.members),
  });
  const select = () => db.selectFrom('groups').selectAll().select(members.as('members'));

  return {
    async create(group) {
      return insertRecordReturning(ctx, GROUPS, toRow(group));
    },

    async ensure(names, at) {
      const distinct: string[] = [...new Set(names)];
      if (distinct.length === 0) return [];
      const ms = toMs(at);
      const rows = await db
        .insertInto('groups')
        .values(
          distinct.map((name) => ({
            name,
            description: null,
            require_mfa: 0,
            created_at: ms,
            updated_at: ms,
          })),
        )
        .onConflict((oc) => oc.column('name').doNothing())
        .returning('name')
        .execute();
      return rows.map((row) => row.name);
    },

    async find(name) {
      const row = await select().where('name', '=', name).executeTakeFirst();
      return row && withMembers(row);
    },

    async page(query) {
      let page = select();
      if (query.after !== undefined) page = page.where(inByteOrder(ctx, 'name'), '>', query.after);
      const rows = await page.orderBy(inByteOrder(ctx, 'name')).limit(query.limit).execute();
      return rows.map(withMembers);
    },

    async update(name, changes) {
      const set: Updateable<GroupsTable> = { updated_at: toMs(changes.updatedAt) };
      if (changes.name !== undefined) set.name = changes.name;
      if (changes.description !== undefined) set.description = changes.description;
      if (changes.requireMfa !== undefined) set.require_mfa = toFlag(changes.requireMfa);
      return insertUnique(ctx, GROUPS.conflicts, 'name', () => updateRecord(db, GROUPS, 'name', name, set));
    },

    async remove(name) {
      return (await deleteRows(db, GROUPS, 'name', name)) > 0;
    },
  };
}

function toRow(group: GroupRecord): GroupsTable {
  return {
    name: group.name,
    description: group.description,
    require_mfa: toFlag(group.requireMfa ?? false),
    created_at: toMs(group.createdAt),
    updated_at: toMs(group.updatedAt),
  };
}

function toGroup(row: Selectable<GroupsTable>): GroupRecord {
  return {
    name: row.name,
    description: row.description,
    // Only when set, as the record leaves it out for false.
    ...(fromFlag(row.require_mfa) ? { requireMfa: true } : {}),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}
