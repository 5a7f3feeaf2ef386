import type { PageQuery } from '@idgate/schema';
import { GroupName, LIMITS } from '@idgate/schema';
import { recordObjectChange } from '../audit/admin.js';
import type { UserRecord } from '../model.js';
import type { GroupSummary } from '../ports/storage.js';
import { AdminError, parseAdminInput } from './errors.js';
import { decodeCursor, pageFrom } from './page.js';
import { type AdminPorts, nowOf } from './ports.js';
import { findUser } from './users.js';

// Groups are not stored apart: a group is the union of users' `groups`, so it exists while it has
// a member. Changing a membership is a change of the user (one row, one change-log entry), which
// is how every replica's token review hears of it.

/** `group` checked as a group name. @throws AdminError `invalid_input` (problem `invalid_group`). */
function groupName(group: string): string {
  return parseAdminInput(GroupName, group, 'group', { label: () => 'group' });
}

/**
 * One page of groups by name (byte order), each with how many users are in it (counted by
 * storage).
 * @throws AdminError `invalid_input` naming `cursor` for a cursor no page gave.
 * @example const { items } = await listGroups(ports, PageQuery.parse({}));
 */
export async function listGroups(
  ports: Pick<AdminPorts, 'storage'>,
  query: PageQuery,
): Promise<{ items: GroupSummary[]; nextCursor: string | null }> {
  const after = decodeCursor(query.cursor, 'group');
  const rows = await ports.storage.users.groups({
    limit: query.limit + 1,
    ...(after === undefined ? {} : { after }),
  });
  return pageFrom(rows, query.limit, (group) => group.name);
}

/**
 * One page of the members of `group`, by username.
 * @throws AdminError `invalid_input` (`invalid_group`) for a malformed name; `not_found`
 * (`group_not_found`) when no user is in the group.
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
  if (rows.length === 0 && (await ports.storage.users.groups({ limit: 1, name })).length === 0)
    throw new AdminError('not_found', 'group', `no group ${name}`, { key: name });
  return pageFrom(rows, query.limit, (user) => user.username.toLowerCase());
}

/**
 * Puts a user in a group (which then exists); `changed` is false when the user was in it already.
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
 * group no user is in.
 * @example await removeGroupMember(ports, 'dev', 'alice');
 */
export async function removeGroupMember(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'auditActor'>,
  group: string,
  username: string,
): Promise<{ user: UserRecord; changed: boolean }> {
  const name = groupName(group);
  return ports.storage.transaction(async (storage) => {
    if ((await storage.users.groups({ limit: 1, name })).length === 0)
      throw new AdminError('not_found', 'group', `no group ${name}`, { key: name });
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
  operation: 'add-member' | 'remove-member',
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
