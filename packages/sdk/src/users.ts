import {
  CreatedUser,
  type CreateGroupInput,
  type CreateUserRequest,
  Group,
  GroupName,
  LinkedIdentity,
  type LinkIdentityRequest,
  LoginAttempt,
  pageOf,
  type UpdateGroupInput,
  type UpdateUserInput,
  User,
  type UserStatus,
} from '@idgate/schema';
import {
  ADMIN_CALL,
  jsonBody,
  NO_CONTENT,
  type Page,
  type PageOptions,
  queryString,
  usernameSegment,
} from './admin-http.js';
import { ClientAdminMethods } from './credentials.js';
import { IdgateSdkError } from './errors.js';
import { itemsOf } from './federation.js';

const USER_PAGE = pageOf(User);
const GROUP_PAGE = pageOf(Group);
const LOGINS = itemsOf(LoginAttempt);

/** What {@link IdgateUserMethods.listUsers} filters by. */
export interface UserListOptions extends PageOptions {
  /** Only members of this group. */
  group?: string;
  /** `active` (neither disabled nor locked), `disabled` or `locked` (by failed sign-ins). */
  status?: UserStatus;
  /** Text in the username, email or display name, in any case. */
  q?: string;
}

/** A conditional change: `ifMatch` is the `etag` of the user as read (412 if it changed since). */
export interface IfMatchOptions {
  ifMatch?: string;
}

/**
 * The methods of {@link IdgateAdminClient} about local users and groups: the admin API under
 * `/admin/v1/users` and `/admin/v1/groups`. Refusals are `IdgateHttpError`s carrying the problem's
 * `code`: `user_not_found` (404), `user_exists` (409), `invalid_user` (400, naming the field),
 * `weak_password` (400), `precondition_failed` (412), `group_not_found`, `invalid_group`.
 * @example
 * const admin = createIdgateAdminClient({ baseUrl: 'https://id.example.com', apiKey: adminKey });
 * const { password } = await admin.createUser({ username: 'alice', groups: ['dev'] });
 */
export interface IdgateUserMethods {
  /**
   * `GET /admin/v1/users`: a page of users by username, filtered.
   * @example const { items, nextCursor } = await admin.listUsers({ group: 'dev', status: 'active' });
   */
  listUsers(query?: UserListOptions): Promise<Page<User>>;

  /**
   * `GET /admin/v1/users/{username}`: the user (any case of its name), with its `etag`.
   * @example const { etag, groups } = await admin.getUser('alice');
   */
  getUser(username: string): Promise<User>;

  /**
   * `POST /admin/v1/users`: creates a user; without `password` one is generated and answered once
   * (`password` in the result). A chosen password must pass the password policy (`weak_password`).
   * Never retried.
   * @example const { password } = await admin.createUser({ username: 'alice', email: 'alice@example.com' });
   */
  createUser(input: CreateUserRequest): Promise<CreatedUser>;

  /**
   * `PATCH /admin/v1/users/{username}`: changes email, display name, groups (replacing the list)
   * or disabled; with `ifMatch`, only if the user is still as read. Disabling also ends the user's
   * browser sessions and revokes its grants (enabling again restores none). Never retried.
   * @example await admin.updateUser('alice', { groups: ['dev', 'ops'] }, { ifMatch: user.etag });
   */
  updateUser(username: string, patch: UpdateUserInput, options?: IfMatchOptions): Promise<User>;

  /**
   * `DELETE /admin/v1/users/{username}`: deletes a user, revoking its grants and tokens, ending
   * its browser sessions and removing its linked identities. Never retried.
   * @example await admin.deleteUser('alice');
   */
  deleteUser(username: string, options?: IfMatchOptions): Promise<void>;

  /**
   * `PUT /admin/v1/users/{username}/password`: sets the password, or generates one (answered once
   * as `password`) when none is given. Never retried.
   * @example const { password } = await admin.setUserPassword('alice');
   */
  setUserPassword(username: string, password?: string): Promise<CreatedUser>;

  /**
   * `POST /admin/v1/users/{username}/unlock`: lifts a brute-force lock on the account (blocks of
   * source addresses stay).
   * @example await admin.unlockUser('alice');
   */
  unlockUser(username: string): Promise<User>;

  /**
   * `GET /admin/v1/users/{username}/logins`: the latest sign-in attempts, newest first (`limit`
   * 1–1000, default 20).
   * @example const { items } = await admin.listUserLogins('alice', { limit: 50 });
   */
  listUserLogins(username: string, options?: { limit?: number }): Promise<{ items: LoginAttempt[] }>;

  /**
   * `POST /admin/v1/users/{username}/identities`: links an external identity (its subject at an
   * identity provider kept in the database) to the user. Never retried.
   * @example await admin.linkIdentity('alice', { provider: 'github', subject: '583231' });
   */
  linkIdentity(username: string, identity: LinkIdentityRequest): Promise<LinkedIdentity>;

  /**
   * `DELETE /admin/v1/users/{username}/identities/{provider}/{subject}`: unlinks an identity.
   * @example await admin.unlinkIdentity('alice', 'github', '583231');
   */
  unlinkIdentity(username: string, provider: string, subject: string): Promise<void>;

  /**
   * `GET /admin/v1/groups`: a page of groups by name (empty ones too), each with its member count.
   * @example const { items } = await admin.listGroups();
   */
  listGroups(query?: PageOptions): Promise<Page<Group>>;

  /**
   * `GET /admin/v1/groups/{group}`: the group, its description and member count (404
   * `group_not_found` when there is none).
   * @example const { members } = await admin.getGroup('dev');
   */
  getGroup(group: string): Promise<Group>;

  /**
   * `POST /admin/v1/groups`: creates a group with no member (409 `group_exists` for a name taken);
   * `requireMfa: true` makes its members sign in with a second factor. Never retried.
   * @example await admin.createGroup({ name: 'ops', description: 'Operators', requireMfa: true });
   */
  createGroup(input: CreateGroupInput): Promise<Group>;

  /**
   * `PATCH /admin/v1/groups/{group}`: renames the group (on every member, in one transaction)
   * and/or changes its description (null removes it) or `requireMfa`. 409 `group_exists` for a
   * new name taken. Never retried.
   * @example await admin.updateGroup('dev', { name: 'developers' });
   */
  updateGroup(group: string, patch: UpdateGroupInput): Promise<Group>;

  /**
   * `DELETE /admin/v1/groups/{group}`: deletes the group; one with members is refused (409
   * `group_has_members`) unless `force`, which takes every member out of it. Never retried.
   * @example await admin.deleteGroup('dev', { force: true });
   */
  deleteGroup(group: string, options?: { force?: boolean }): Promise<void>;

  /**
   * `GET /admin/v1/groups/{group}/members`: a page of the group's users (404 `group_not_found`
   * when no user is in it).
   * @example const { items } = await admin.listGroupMembers('dev');
   */
  listGroupMembers(group: string, query?: PageOptions): Promise<Page<User>>;

  /**
   * `PUT /admin/v1/groups/{group}/members/{username}`: puts the user in the group (idempotent).
   * @example await admin.addGroupMember('dev', 'alice');
   */
  addGroupMember(group: string, username: string): Promise<User>;

  /**
   * `DELETE /admin/v1/groups/{group}/members/{username}`: takes the user out of the group.
   * @example await admin.removeGroupMember('dev', 'alice');
   */
  removeGroupMember(group: string, username: string): Promise<void>;
}

/** The user and group methods of the admin client; its class extends this one. */
export class UserMethods extends ClientAdminMethods implements IdgateUserMethods {
  listUsers(query: UserListOptions = {}): Promise<Page<User>> {
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `admin/v1/users${queryString(query)}`,
      schema: USER_PAGE,
      schemaName: 'Page<User>',
    });
  }

  getUser(username: string): Promise<User> {
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `admin/v1/users/${usernameSegment(username, 'GET /admin/v1/users/{username}')}`,
      schema: User,
      schemaName: 'User',
    });
  }

  createUser(input: CreateUserRequest): Promise<CreatedUser> {
    const endpoint = 'POST /admin/v1/users';
    return this[ADMIN_CALL](
      {
        method: 'POST',
        path: 'admin/v1/users',
        schema: CreatedUser,
        schemaName: 'CreatedUser',
        ...json(input, endpoint),
      },
      [input?.password],
    );
  }

  updateUser(username: string, patch: UpdateUserInput, options: IfMatchOptions = {}): Promise<User> {
    const endpoint = 'PATCH /admin/v1/users/{username}';
    const call = json(patch, endpoint, options);
    return this[ADMIN_CALL]({
      method: 'PATCH',
      path: `admin/v1/users/${usernameSegment(username, endpoint)}`,
      schema: User,
      schemaName: 'User',
      ...call,
    });
  }

  async deleteUser(username: string, options: IfMatchOptions = {}): Promise<void> {
    const endpoint = 'DELETE /admin/v1/users/{username}';
    await this[ADMIN_CALL]({
      method: 'DELETE',
      path: `admin/v1/users/${usernameSegment(username, endpoint)}`,
      schema: NO_CONTENT,
      schemaName: 'an empty response',
      headers: options.ifMatch === undefined ? {} : { 'if-match': options.ifMatch },
      retry: 0,
    });
  }

  setUserPassword(username: string, password?: string): Promise<CreatedUser> {
    const endpoint = 'PUT /admin/v1/users/{username}/password';
    return this[ADMIN_CALL](
      {
        method: 'PUT',
        path: `admin/v1/users/${usernameSegment(username, endpoint)}/password`,
        schema: CreatedUser,
        schemaName: 'CreatedUser',
        ...json(password === undefined ? {} : { password }, endpoint),
      },
      [password],
    );
  }

  unlockUser(username: string): Promise<User> {
    const endpoint = 'POST /admin/v1/users/{username}/unlock';
    return this[ADMIN_CALL]({
      method: 'POST',
      path: `admin/v1/users/${usernameSegment(username, endpoint)}/unlock`,
      schema: User,
      schemaName: 'User',
    });
  }

  listUserLogins(username: string, options: { limit?: number } = {}): Promise<{ items: LoginAttempt[] }> {
    const endpoint = 'GET /admin/v1/users/{username}/logins';
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `admin/v1/users/${usernameSegment(username, endpoint)}/logins${queryString(options)}`,
      schema: LOGINS,
      schemaName: '{ items: LoginAttempt[] }',
    });
  }

  linkIdentity(username: string, identity: LinkIdentityRequest): Promise<LinkedIdentity> {
    const endpoint = 'POST /admin/v1/users/{username}/identities';
    return this[ADMIN_CALL]({
      method: 'POST',
      path: `admin/v1/users/${usernameSegment(username, endpoint)}/identities`,
      schema: LinkedIdentity,
      schemaName: 'LinkedIdentity',
      ...json(identity, endpoint),
    });
  }

  async unlinkIdentity(username: string, provider: string, subject: string): Promise<void> {
    const endpoint = 'DELETE /admin/v1/users/{username}/identities/{provider}/{subject}';
    const rest = [provider, subject].map((part) => pathPart(part, endpoint)).join('/');
    await this[ADMIN_CALL]({
      method: 'DELETE',
      path: `admin/v1/users/${usernameSegment(username, endpoint)}/identities/${rest}`,
      schema: NO_CONTENT,
      schemaName: 'an empty response',
      retry: 0,
    });
  }

  listGroups(query: PageOptions = {}): Promise<Page<Group>> {
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `admin/v1/groups${queryString(query)}`,
      schema: GROUP_PAGE,
      schemaName: 'Page<Group>',
    });
  }

  getGroup(group: string): Promise<Group> {
    const endpoint = 'GET /admin/v1/groups/{group}';
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `admin/v1/groups/${groupSegment(group, endpoint)}`,
      schema: Group,
      schemaName: 'Group',
    });
  }

  createGroup(input: CreateGroupInput): Promise<Group> {
    return this[ADMIN_CALL]({
      method: 'POST',
      path: 'admin/v1/groups',
      schema: Group,
      schemaName: 'Group',
      ...json(input, 'POST /admin/v1/groups'),
    });
  }

  updateGroup(group: string, patch: UpdateGroupInput): Promise<Group> {
    const endpoint = 'PATCH /admin/v1/groups/{group}';
    return this[ADMIN_CALL]({
      method: 'PATCH',
      path: `admin/v1/groups/${groupSegment(group, endpoint)}`,
      schema: Group,
      schemaName: 'Group',
      ...json(patch, endpoint),
    });
  }

  async deleteGroup(group: string, options: { force?: boolean } = {}): Promise<void> {
    const endpoint = 'DELETE /admin/v1/groups/{group}';
    await this[ADMIN_CALL]({
      method: 'DELETE',
      path: `admin/v1/groups/${groupSegment(group, endpoint)}${options.force === true ? '?force=true' : ''}`,
      schema: NO_CONTENT,
      schemaName: 'an empty response',
      retry: 0,
    });
  }

  listGroupMembers(group: string, query: PageOptions = {}): Promise<Page<User>> {
    const endpoint = 'GET /admin/v1/groups/{group}/members';
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `admin/v1/groups/${groupSegment(group, endpoint)}/members${queryString(query)}`,
      schema: USER_PAGE,
      schemaName: 'Page<User>',
    });
  }

  addGroupMember(group: string, username: string): Promise<User> {
    const endpoint = 'PUT /admin/v1/groups/{group}/members/{username}';
    return this[ADMIN_CALL]({
      method: 'PUT',
      path: `admin/v1/groups/${groupSegment(group, endpoint)}/members/${usernameSegment(username, endpoint)}`,
      schema: User,
      schemaName: 'User',
    });
  }

  async removeGroupMember(group: string, username: string): Promise<void> {
    const endpoint = 'DELETE /admin/v1/groups/{group}/members/{username}';
    await this[ADMIN_CALL]({
      method: 'DELETE',
      path: `admin/v1/groups/${groupSegment(group, endpoint)}/members/${usernameSegment(username, endpoint)}`,
      schema: NO_CONTENT,
      schemaName: 'an empty response',
    });
  }
}

/** A JSON body (and `If-Match`), never retried: a write must not be sent twice. */
function json(body: unknown, endpoint: string, options: IfMatchOptions = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.ifMatch !== undefined) headers['if-match'] = options.ifMatch;
  return { headers, body: jsonBody(body, endpoint), retry: 0 };
}

/** `?key=value&…` of the options that are set, or ''. */

function groupSegment(group: string, endpoint: string): string {
  if (typeof group !== 'string' || !GroupName.safeParse(group).success)
    throw new IdgateSdkError('group must be 1–256 printable ASCII characters without spaces', { endpoint });
  return encodeURIComponent(group);
}

function pathPart(value: string, endpoint: string): string {
  if (typeof value !== 'string' || value === '')
    throw new IdgateSdkError('provider and subject must be non-empty strings', { endpoint });
  return encodeURIComponent(value);
}
