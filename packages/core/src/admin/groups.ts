import type { DescribeIssueOptions, Group, PageQuery } from '@idgate/schema';
import { CreateGroupInput, GroupName, LIMITS, UpdateGroupInput } from '@idgate/schema';
import { recordObjectChange } from '../audit/admin.js';
import type { GroupRecord, UserRecord } from '../model.js';
import type { Storage, StoredGroup } from '../ports/storage.js';
import { AdminError, parseAdminInput, refusingConflicts } from './errors.js';
import { decodeCursor, pageFrom } from './page.js';
import { type AdminPorts, nowOf } from './ports.js';
import { findUser } from './users.js';

// A group is a row of its own (name, description) and its members are users whose `groups` name
// it: a token review reads one user row. Storage creates the row of any group a user is put in,
// so every group a user is in exists. Changing a membership, renaming or deleting a group changes
// each member (one row, one change-log entry each), which is how every replica's token review
// hears of it.

type Ports = Pick<AdminPorts, 'storage' | 'clock' | 'auditActor'>;

/** Users renamed or taken out of a group per round trip. */
const MEMBERS_PER_BATCH = 200;

const GROUP_FIELDS = ['name', 'description', 'requireMfa'] as const;

/** A group with `requireMfa` told either way, as its change events compare it. */
const withPolicy = <T extends GroupRecord>(group: T): T => ({
  ...group,
  requireMfa: group.requireMfa === true,
});

const notFound = (name: string) => new AdminError('not_found', 'group', `no group ${name}`, { key: name });
const taken = (name: string) =>
  new AdminError('conflict', 'group', `group ${name} already exists`, { key: name, problem: 'group_exists' });

/** A stored group as the admin API shows it. @example groupView(stored).members */
export function groupView(group: StoredGroup): Group {
  return {
    name: group.name,
    description: group.description,
    requireMfa: group.requireMfa === true,
    members: group.members,
    createdAt: group.createdAt.toISOString(),
    updatedAt: group.updatedAt.toISOString(),
  };
}

/** `group` checked as a group name. @throws AdminError `invalid_input` (problem `invalid_group`). */
function groupName(group: string): string {
  return parseAdminInput(GroupName, group, 'group', { label: () => 'group' });
}

/**
 * One page of groups by name (byte order), empty ones included, each with how many users are in
 * it (counted by storage).
 * @throws AdminError `invalid_input` naming `cursor` for a cursor no page gave.
 * @example const { items } = await listGroups(ports, PageQuery.parse({}));
 */
export async function listGroups(
  ports: Pick<AdminPorts, 'storage'>,
  query: PageQuery,
): Promise<{ items: Group[]; nextCursor: string | null }> {
  const after = decodeCursor(query.cursor, 'group');
  const rows = await ports.storage.groups.page({
    limit: query.limit + 1,
    ...(after === undefined ? {} : { after }),
  });
  const page = pageFrom(rows, query.limit, (group) => group.name);
  return { items: page.items.map(groupView), nextCursor: page.nextCursor };
}

/**
 * The group called exactly `group`, with how many users are in it.
 * @throws AdminError `invalid_input` (`invalid_group`); `not_found` (`group_not_found`).
 * @example const { members } = await getGroup(ports, 'dev');
 */
export async function getGroup(ports: Pick<AdminPorts, 'storage'>, group: string): Promise<Group> {
  const name = groupName(group);
  const stored = await ports.storage.groups.find(name);
  if (stored === undefined) throw notFound(name);
  return groupView(stored);
}

/**
 * Creates a group with no member.
 * @throws AdminError `invalid_input` naming the bad field (`invalid_group`); `conflict`
 * (`group_exists`) for a name taken.
 * @example const group = await createGroup(ports, { name: 'dev', description: 'Developers' });
 */
export async function createGroup(
  ports: Ports,
  input: unknown,
  options: Omit<DescribeIssueOptions, 'input' | 'secrets'> = {},
): Promise<Group> {
  const fields = parseAdminInput(CreateGroupInput, input, 'group', options);
  const now = nowOf(ports);
  const record: GroupRecord = {
    name: fields.name,
    description: fields.description ?? null,
    ...(fields.requireMfa === true ? { requireMfa: true } : {}),
    createdAt: now,
    updatedAt: now,
  };
  return ports.storage.transaction(async (tx) => {
    const created = await refusingConflicts(
      () => tx.groups.create(record),
      () => taken(record.name),
    );
    await recordObjectChange(
      tx,
      ports,
      { objectKind: 'group', objectId: created.name },
      null,
      withPolicy(created),
      [...GROUP_FIELDS],
    );
    return groupView({ ...created, members: 0 });
  });
}

/**
 * Renames a group and/or changes its description, in one transaction: renamed, every member's
 * groups name it by its new name (each member a change every replica's token review hears of).
 * @throws AdminError `invalid_input` (`invalid_group`); `not_found` (`group_not_found`);
 * `conflict` (`group_exists`) when the new name is taken.
 * @example await updateGroup(ports, 'dev', { name: 'developers' });
 */
export async function updateGroup(
  ports: Ports,
  group: string,
  input: unknown,
  options: Omit<DescribeIssueOptions, 'input' | 'secrets'> = {},
): Promise<Group> {
  const name = groupName(group);
  const fields = parseAdminInput(UpdateGroupInput, input, 'group', options);
  return ports.storage.transaction(async (tx) => {
    const before = await tx.groups.find(name);
    if (before === undefined) throw notFound(name);
    const rename = fields.name !== undefined && fields.name !== name ? fields.name : undefined;
    const now = nowOf(ports);
    const updated = await refusingConflicts(
      () =>
        tx.groups.update(name, {
          updatedAt: now,
          ...(rename === undefined ? {} : { name: rename }),
          ...(fields.description === undefined ? {} : { description: fields.description }),
          ...(fields.requireMfa === undefined ? {} : { requireMfa: fields.requireMfa }),
        }),
      () => taken(rename ?? name),
    );
    if (updated === undefined) throw notFound(name);
    if (rename !== undefined)
      await eachMember(tx, name, (user) =>
        setGroups(tx, ports, user, [...new Set(user.groups.map((g) => (g === name ? rename : g)))], 'rename'),
      );
    await recordObjectChange(
      tx,
      ports,
      {
        objectKind: 'group',
        objectId: updated.name,
        ...(rename === undefined ? {} : { operation: 'rename' }),
      },
      withPolicy(before),
      withPolicy(updated),
      [...GROUP_FIELDS],
    );
    return groupView({ ...updated, members: before.members });
  });
}

/**
 * Deletes a group. One with members is refused unless `force`, which takes every member out of it
 * first (in the same transaction; each member a change token reviews hear of).
 * @throws AdminError `invalid_input` (`invalid_group`); `not_found` (`group_not_found`);
 * `conflict` (`group_has_members`, 409) for a group with members without `force`.
 * @example const { removedMembers } = await deleteGroup(ports, 'dev', { force: true });
 */
export async function deleteGroup(
  ports: Ports,
  group: string,
  options: { force?: boolean } = {},
): Promise<{ name: string; removedMembers: number }> {
  const name = groupName(group);
  return ports.storage.transaction(async (tx) => {
    const before = await tx.groups.find(name);
    if (before === undefined) throw notFound(name);
    if (before.members > 0 && options.force !== true)
      throw new AdminError(
        'conflict',
        'group',
        `group ${name} has ${before.members} member${before.members === 1 ? '' : 's'}; take them out first, or delete with force`,
        { key: name, problem: 'group_has_members' },
      );
    const removedMembers = await eachMember(tx, name, (user) =>
      setGroups(
        tx,
        ports,
        user,
        user.groups.filter((g) => g !== name),
        'remove-member',
      ),
    );
    if (!(await tx.groups.remove(name))) throw notFound(name);
    await recordObjectChange(tx, ports, { objectKind: 'group', objectId: name }, withPolicy(before), null, [
      ...GROUP_FIELDS,
    ]);
    return { name, removedMembers };
  });
}

/**
 * Calls `change` for every member of `group` until none is left: `change` must take the user out
 * of it (rename or remove), or this would not end. Answers how many there were.
 */
async function eachMember(
  storage: Storage,
  group: string,
  change: (user: UserRecord) => Promise<unknown>,
): Promise<number> {
  let count = 0;
  for (;;) {
    const members = await storage.users.page({ limit: MEMBERS_PER_BATCH, group });
    if (members.length === 0) return count;
    for (const user of members) await change(user);
    count += members.length;
  }
}

/**
 * One page of the members of `group`, by username.
 * @throws AdminError `invalid_input` (`invalid_group`) for a malformed name; `not_found`
 * (`group_not_found`) when there is no such group.
 * @example const { items } = await listGroupMembers(ports, 'dev', PageQuery.parse({ limit: '50' }));
 */
export async function listGroupMembers(
  ports: Pick<AdminPorts, 'storage'>,
  group: string,
  query: PageQuery,
): Promise<{ items: UserRecord[]; nextCursor: string | null }> {
  const name = groupName(group);
  const after = decodeCursor(query.cursor, 'user');
  const rows = await ports.storage.users.page({
    limit: query.limit + 1,
    group: name,
    ...(after === undefined ? {} : { after }),
  });
  if (rows.length === 0 && (await ports.storage.groups.find(name)) === undefined) throw notFound(name);
  return pageFrom(rows, query.limit, (user) => user.username.toLowerCase());
}

/**
 * Puts a user in a group (created, without description, when there is none); `changed` is false
 * when the user was in it already.
 * @throws AdminError `invalid_input` (`invalid_group`); `not_found` for an unknown user;
 * `conflict` (problem `too_many_groups`, 409) for a user in `LIMITS.groupsPerUser` groups already.
 * @example await addGroupMember(ports, 'dev', 'alice');
 */
export async function addGroupMember(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'auditActor'>,
  group: string,
  username: string,
): Promise<{ user: UserRecord; changed: boolean }> {
  const name = groupName(group);
  return ports.storage.transaction(async (storage) => {
    const user = await findUser(storage, username);
    if (user.groups.includes(name)) return { user, changed: false };
    if (user.groups.length >= LIMITS.groupsPerUser)
      throw new AdminError(
        'conflict',
        'group',
        `${user.username} is in ${user.groups.length} groups already, the most a user may be in (${LIMITS.groupsPerUser})`,
        { key: name, problem: 'too_many_groups' },
      );
    const updated = await setGroups(storage, ports, user, [...user.groups, name], 'add-member');
    return { user: updated, changed: true };
  });
}

/**
 * Takes a user out of a group; `changed` is false when the user was not in it.
 * @throws AdminError `invalid_input` (`invalid_group`); `not_found` for an unknown user, or a
 * group that does not exist.
 * @example await removeGroupMember(ports, 'dev', 'alice');
 */
export async function removeGroupMember(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'auditActor'>,
  group: string,
  username: string,
): Promise<{ user: UserRecord; changed: boolean }> {
  const name = groupName(group);
  return ports.storage.transaction(async (storage) => {
    if ((await storage.groups.find(name)) === undefined) throw notFound(name);
    const user = await findUser(storage, username);
    if (!user.groups.includes(name)) return { user, changed: false };
    const groups = user.groups.filter((g) => g !== name);
    return { user: await setGroups(storage, ports, user, groups, 'remove-member'), changed: true };
  });
}

async function setGroups(
  storage: AdminPorts['storage'],
  ports: Pick<AdminPorts, 'clock' | 'auditActor'>,
  user: UserRecord,
  groups: string[],
  operation: 'add-member' | 'remove-member' | 'rename',
): Promise<UserRecord> {
  const updated = await storage.users.update(user.id, { groups, updatedAt: nowOf(ports) });
  if (updated === undefined)
    throw new AdminError('not_found', 'user', `no user ${user.username}`, { key: user.username });
  await recordObjectChange(
    storage,
    ports,
    { objectKind: 'group', objectId: user.id, operation, subject: user.id },
    user,
    updated,
    ['groups'],
  );
  return updated;
}
