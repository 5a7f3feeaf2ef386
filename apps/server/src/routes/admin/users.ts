import type { UserRecord } from '@idgate/core';
import {
  createUser,
  deleteUser,
  getUser,
  LOGIN_ATTEMPTS_LIMIT,
  listLoginAttempts,
  listUserPage,
  loginAttemptView,
  setUserPassword,
  unlockUser,
  updateUser,
  userView,
} from '@idgate/core/admin';
import {
  CreatedUser,
  CreateUserRequest,
  LoginAttempt,
  LoginAttemptQuery,
  pageOf,
  SetPasswordInput,
  UpdateUserInput,
  User,
  UserListQuery,
} from '@idgate/schema';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { adminScope } from './scope.js';

const BASE = '/admin/v1/users';
const TAGS = ['users'];

/** The path parameter of every route about one user. */
export const UserParams = z.object({ username: z.string() });

const NOT_FOUND = { description: 'there is no such user', problem: ['user_not_found'] } as const;
const ETAG = { ETag: 'the version of the user, for If-Match' } as const;
const IF_MATCH =
  'With `If-Match` (the `etag` read before), the change is made only if the user has not changed since (412 otherwise).';

/** Sends a user with its ETag. */
function sendUser(reply: FastifyReply, user: UserRecord, extra: { password?: string } = {}) {
  const view = userView(user);
  return reply.header('etag', view.etag).send({ ...view, ...extra });
}

const ifMatch = (request: FastifyRequest) => {
  const header = request.headers['if-match'];
  return Array.isArray(header) ? header.join(', ') : header;
};

/**
 * The admin REST API of local users, under `/admin/v1/users`: list (paged, filtered), read,
 * create, change, delete, set a password, unlock, and list sign-in attempts. Each route needs an API key
 * holding the scope it declares; errors are RFC 9457 problems. A password chosen by the caller
 * must pass the password policy (`weak_password`); a generated one is answered once.
 */
export async function adminUserRoutes(app: FastifyInstance): Promise<void> {
  const { route, root } = adminScope(app, 'user');

  app.get(
    BASE,
    route(
      {
        operationId: 'listUsers',
        scope: 'users:read',
        summary: 'List users',
        description:
          'A page of users by username; `group`, `status` (active, disabled, locked) and `q` (text in the username, email or display name) filter it.',
        tags: TAGS,
        query: UserListQuery,
        responses: {
          200: { description: 'a page of users', json: pageOf(User) },
          400: { description: 'a bad filter, limit or cursor', problem: ['invalid_user'] },
        },
      },
      async ({ query }, request) => {
        const page = await listUserPage(request.admin, query);
        return { items: page.items.map(userView), nextCursor: page.nextCursor };
      },
    ),
  );

  app.get(
    `${BASE}/:username`,
    route(
      {
        operationId: 'getUser',
        scope: 'users:read',
        summary: 'Read a user',
        tags: TAGS,
        params: UserParams,
        responses: { 200: { description: 'the user', json: User, headers: ETAG }, 404: NOT_FOUND },
      },
      async ({ params }, request, reply) => sendUser(reply, await getUser(request.admin, params.username)),
    ),
  );

  app.post(
    BASE,
    route(
      {
        operationId: 'createUser',
        scope: 'users:write',
        summary: 'Create a user',
        description: 'Without `password`, one is generated and answered once (`password` in the response).',
        tags: TAGS,
        body: { json: CreateUserRequest, required: true },
        responses: {
          201: {
            description: 'the user, with its generated password when one was generated',
            json: CreatedUser,
            headers: { ...ETAG, Location: 'the URL of the user' },
          },
          400: { description: 'a bad field, or a weak password', problem: ['invalid_user', 'weak_password'] },
          409: { description: 'the username is taken (in any case)', problem: ['user_exists'] },
        },
      },
      { json: 'a user' },
      async ({ body: { password, ...input } }, request, reply) => {
        const { user, generatedPassword } = await createUser(request.admin, input, password);
        reply.status(201).header('location', `${root}${BASE}/${encodeURIComponent(user.username)}`);
        return sendUser(reply, user, generatedPassword === undefined ? {} : { password: generatedPassword });
      },
    ),
  );

  app.patch(
    `${BASE}/:username`,
    route(
      {
        operationId: 'updateUser',
        scope: 'users:write',
        summary: 'Change a user',
        description:
          'Changes email, display name, groups (the list replaces the old one) or disabled. Disabling a user ' +
          'also signs it out everywhere, in the same transaction: its browser sessions end and its grants are ' +
          'revoked (refresh tokens get invalid_grant; access tokens are refused by introspection and token ' +
          `review at once, and stay refused if the user is enabled again). ${IF_MATCH}`,
        tags: TAGS,
        params: UserParams,
        body: { json: UpdateUserInput, required: true },
        responses: {
          200: { description: 'the changed user', json: User, headers: ETAG },
          400: { description: 'a bad field', problem: ['invalid_user'] },
          404: NOT_FOUND,
          412: { description: 'the user has changed since it was read', problem: ['precondition_failed'] },
        },
      },
      { json: 'a change of a user' },
      async ({ params, body }, request, reply) => {
        const user = await updateUser(request.admin, params.username, body, { ifMatch: ifMatch(request) });
        return sendUser(reply, user);
      },
    ),
  );

  app.delete(
    `${BASE}/:username`,
    route(
      {
        operationId: 'deleteUser',
        scope: 'users:write',
        summary: 'Delete a user',
        description: `Revokes the user's grants (and so its tokens), ends its browser sessions and removes its linked identities, in one transaction. ${IF_MATCH}`,
        tags: TAGS,
        params: UserParams,
        responses: {
          204: { description: 'deleted' },
          404: NOT_FOUND,
          412: { description: 'the user has changed since it was read', problem: ['precondition_failed'] },
        },
      },
      async ({ params }, request, reply) => {
        await deleteUser(request.admin, params.username, { ifMatch: ifMatch(request) });
        return reply.status(204).send();
      },
    ),
  );

  app.put(
    `${BASE}/:username/password`,
    route(
      {
        operationId: 'setUserPassword',
        scope: 'users:password',
        summary: "Set a user's password",
        description: 'Without `password`, one is generated and answered once.',
        tags: TAGS,
        params: UserParams,
        body: { json: SetPasswordInput, required: true },
        responses: {
          200: {
            description: 'the user, with its generated password when one was generated',
            json: CreatedUser,
          },
          400: { description: 'a weak password', problem: ['invalid_user', 'weak_password'] },
          404: NOT_FOUND,
        },
      },
      { json: 'a password' },
      async ({ params, body }, request, reply) => {
        const { user, generatedPassword } = await setUserPassword(
          request.admin,
          params.username,
          body.password,
        );
        return sendUser(reply, user, generatedPassword === undefined ? {} : { password: generatedPassword });
      },
    ),
  );

  app.post(
    `${BASE}/:username/unlock`,
    route(
      {
        operationId: 'unlockUser',
        scope: 'users:unlock',
        summary: "Lift a user's brute-force lock",
        description:
          'Failed sign-ins before the unlock no longer lock the account; blocks of source addresses stay.',
        tags: TAGS,
        params: UserParams,
        responses: { 200: { description: 'the user', json: User, headers: ETAG }, 404: NOT_FOUND },
      },
      async ({ params }, request, reply) => {
        const { user } = await unlockUser(request.admin, params.username, { by: request.ip });
        return sendUser(reply, user);
      },
    ),
  );

  app.get(
    `${BASE}/:username/logins`,
    route(
      {
        operationId: 'listUserLogins',
        scope: 'users:read',
        summary: "A user's latest sign-in attempts",
        description: `Newest first, at most \`limit\` (1–${LOGIN_ATTEMPTS_LIMIT.max}, default ${LOGIN_ATTEMPTS_LIMIT.default}).`,
        tags: TAGS,
        params: UserParams,
        query: LoginAttemptQuery,
        responses: {
          200: { description: 'the attempts', json: z.object({ items: z.array(LoginAttempt) }) },
          400: { description: 'a bad limit', problem: ['invalid_user'] },
          404: NOT_FOUND,
        },
      },
      async ({ params, query }, request) => {
        const attempts = await listLoginAttempts(request.admin, params.username, query.limit);
        return { items: attempts.map(loginAttemptView) };
      },
    ),
  );
}
