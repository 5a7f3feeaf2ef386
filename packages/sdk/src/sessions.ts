import {
  EndedSessions,
  FactorsReset,
  GrantId,
  GrantInfo,
  pageOf,
  RevokedGrants,
  SessionId,
  SessionInfo,
  UserFactors,
} from '@idgate/schema';
import {
  ADMIN_CALL,
  jsonBody,
  NO_CONTENT,
  type PageOptions,
  queryString,
  usernameSegment,
} from './admin-http.js';
import { IdgateSdkError } from './errors.js';
import { TrustMethods } from './trusts.js';

const SESSIONS = pageOf(SessionInfo);
const GRANTS = pageOf(GrantInfo);

/**
 * The methods of {@link IdgateAdminClient} about a user's browser sessions and grants: the
 * admin API under `/admin/v1/users/{username}`. Unknown users answer a 404 `IdgateHttpError`
 * with problem code `user_not_found`.
 * @example
 * const admin = createIdgateAdminClient({ baseUrl: 'https://id.example.com', apiKey: adminKey });
 * const { items } = await admin.listUserGrants('alice');
 * await admin.revokeUserGrant('alice', items[0].id);
 */
export interface IdgateSessionMethods {
  /**
   * `GET /admin/v1/users/{username}/sessions`: one page of the user's live browser sessions,
   * oldest first, with where each signed in from and the applications it signed in to.
   * @example const { items, nextCursor } = await admin.listUserSessions('alice', { limit: 50 });
   */
  listUserSessions(
    username: string,
    page?: PageOptions,
  ): Promise<{ items: SessionInfo[]; nextCursor: string | null }>;

  /**
   * `DELETE /admin/v1/users/{username}/sessions/{id}`: ends the session (the browser is signed
   * out) and revokes the grants made in it. A 404 (`session_not_found`) when it is not a live
   * session of the user. Never retried.
   * @example await admin.revokeUserSession('alice', sessionId);
   */
  revokeUserSession(username: string, id: string): Promise<void>;

  /**
   * `DELETE /admin/v1/users/{username}/sessions`: ends every session of the user; answers how
   * many ended and how many grants made in them were revoked. Never retried.
   * @example const { ended } = await admin.revokeUserSessions('alice');
   */
  revokeUserSessions(username: string): Promise<EndedSessions>;

  /**
   * `GET /admin/v1/users/{username}/grants`: one page of the user's live grants, oldest first:
   * client, scopes, and the time and address of the latest token request on each.
   * @example const { items } = await admin.listUserGrants('alice');
   */
  listUserGrants(
    username: string,
    page?: PageOptions,
  ): Promise<{ items: GrantInfo[]; nextCursor: string | null }>;

  /**
   * `DELETE /admin/v1/users/{username}/grants/{id}`: revokes the grant; its refresh tokens stop
   * working at once and its access tokens fail introspection and token review. A 404
   * (`grant_not_found`) when it is not a live grant of the user. Never retried.
   * @example await admin.revokeUserGrant('alice', grantId);
   */
  revokeUserGrant(username: string, id: string): Promise<void>;

  /**
   * `DELETE /admin/v1/users/{username}/grants`: revokes every grant of the user; answers how
   * many. Never retried.
   * @example const { revoked } = await admin.revokeUserGrants('alice');
   */
  revokeUserGrants(username: string): Promise<RevokedGrants>;

  /**
   * `GET /admin/v1/users/{username}/factors`: the user's second factors (kind, name, when enrolled
   * and last used; never a secret), the unused recovery codes left, and whether a second factor
   * is required of them.
   * @example const { factors, mfaRequired } = await admin.listUserFactors('alice');
   */
  listUserFactors(username: string): Promise<UserFactors>;

  /**
   * `DELETE /admin/v1/users/{username}/factors/{id}`: removes one second factor. A 404
   * (`factor_not_found`) when the user has no such factor. Never retried.
   * @example await admin.removeUserFactor('alice', factors[0].id);
   */
  removeUserFactor(username: string, id: string): Promise<void>;

  /**
   * `DELETE /admin/v1/users/{username}/factors`: removes every second factor and recovery code
   * of the user (for someone who lost them all); answers how many factors. Never retried.
   * @example const { removed } = await admin.resetUserFactors('alice');
   */
  resetUserFactors(username: string): Promise<FactorsReset>;

  /**
   * `PUT /admin/v1/users/{username}/factors/requirement`: requires (or stops requiring) a second
   * factor of the user; their next sign-in asks for it, or enrols one first.
   * @example await admin.setMfaRequirement('alice', true);
   */
  setMfaRequirement(username: string, required: boolean): Promise<UserFactors>;
}

/** The session and grant methods of the admin client; its class extends this one. */
export class SessionMethods extends TrustMethods implements IdgateSessionMethods {
  async listUserSessions(
    username: string,
    page: PageOptions = {},
  ): Promise<{ items: SessionInfo[]; nextCursor: string | null }> {
    const endpoint = 'GET /admin/v1/users/{username}/sessions';
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `${userPath(username, endpoint)}/sessions${pageQuery(page, endpoint)}`,
      schema: SESSIONS,
      schemaName: '{ items: SessionInfo[], nextCursor }',
    });
  }

  async revokeUserSession(username: string, id: string): Promise<void> {
    const endpoint = 'DELETE /admin/v1/users/{username}/sessions/{id}';
    await this[ADMIN_CALL]({
      method: 'DELETE',
      path: `${userPath(username, endpoint)}/sessions/${idSegment(SessionId, id, endpoint)}`,
      schema: NO_CONTENT,
      schemaName: 'an empty response',
      retry: 0,
    });
  }

  async revokeUserSessions(username: string): Promise<EndedSessions> {
    return this[ADMIN_CALL]({
      method: 'DELETE',
      path: `${userPath(username, 'DELETE /admin/v1/users/{username}/sessions')}/sessions`,
      schema: EndedSessions,
      schemaName: 'EndedSessions',
      retry: 0,
    });
  }

  async listUserGrants(
    username: string,
    page: PageOptions = {},
  ): Promise<{ items: GrantInfo[]; nextCursor: string | null }> {
    const endpoint = 'GET /admin/v1/users/{username}/grants';
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `${userPath(username, endpoint)}/grants${pageQuery(page, endpoint)}`,
      schema: GRANTS,
      schemaName: '{ items: GrantInfo[], nextCursor }',
    });
  }

  async revokeUserGrant(username: string, id: string): Promise<void> {
    const endpoint = 'DELETE /admin/v1/users/{username}/grants/{id}';
    await this[ADMIN_CALL]({
      method: 'DELETE',
      path: `${userPath(username, endpoint)}/grants/${idSegment(GrantId, id, endpoint)}`,
      schema: NO_CONTENT,
      schemaName: 'an empty response',
      retry: 0,
    });
  }

  async revokeUserGrants(username: string): Promise<RevokedGrants> {
    return this[ADMIN_CALL]({
      method: 'DELETE',
      path: `${userPath(username, 'DELETE /admin/v1/users/{username}/grants')}/grants`,
      schema: RevokedGrants,
      schemaName: 'RevokedGrants',
      retry: 0,
    });
  }

  async listUserFactors(username: string): Promise<UserFactors> {
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `${userPath(username, 'GET /admin/v1/users/{username}/factors')}/factors`,
      schema: UserFactors,
      schemaName: 'UserFactors',
    });
  }

  async removeUserFactor(username: string, id: string): Promise<void> {
    const endpoint = 'DELETE /admin/v1/users/{username}/factors/{id}';
    await this[ADMIN_CALL]({
      method: 'DELETE',
      path: `${userPath(username, endpoint)}/factors/${idSegment(SessionId, id, endpoint)}`,
      schema: NO_CONTENT,
      schemaName: 'an empty response',
      retry: 0,
    });
  }

  async resetUserFactors(username: string): Promise<FactorsReset> {
    return this[ADMIN_CALL]({
      method: 'DELETE',
      path: `${userPath(username, 'DELETE /admin/v1/users/{username}/factors')}/factors`,
      schema: FactorsReset,
      schemaName: 'FactorsReset',
      retry: 0,
    });
  }

  async setMfaRequirement(username: string, required: boolean): Promise<UserFactors> {
    const endpoint = 'PUT /admin/v1/users/{username}/factors/requirement';
    if (typeof required !== 'boolean')
      throw new IdgateSdkError('required must be true or false', { endpoint });
    return this[ADMIN_CALL]({
      method: 'PUT',
      path: `${userPath(username, endpoint)}/factors/requirement`,
      schema: UserFactors,
      schemaName: 'UserFactors',
      headers: { 'content-type': 'application/json' },
      body: jsonBody({ required }, endpoint),
      retry: 0,
    });
  }
}

/** The user's path, the username checked first so that nothing like `..` can change the path. */
function userPath(username: string, endpoint: string): string {
  return `admin/v1/users/${usernameSegment(username, endpoint)}`;
}

/** `id` as a path segment, checked first so that nothing like `..` can change the path. */
function idSegment(schema: typeof SessionId, id: string, endpoint: string): string {
  if (typeof id !== 'string' || !schema.safeParse(id).success) {
    throw new IdgateSdkError('id must be 1–64 letters, digits and -', { endpoint });
  }
  return id;
}

function pageQuery(page: PageOptions, endpoint: string): string {
  if (page.limit !== undefined && (!Number.isInteger(page.limit) || page.limit < 1 || page.limit > 500)) {
    throw new IdgateSdkError('limit must be a whole number from 1 to 500', { endpoint });
  }
  return queryString({ limit: page.limit, cursor: page.cursor });
}
