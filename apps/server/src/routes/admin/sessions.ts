import {
  endAllUserSessions,
  endUserSession,
  listUserGrants,
  listUserSessions,
  revokeAllUserGrants,
  revokeUserGrant,
} from '@idgate/core/admin';
import {
  EndedSessions,
  GrantId,
  GrantInfo,
  PageQuery,
  pageOf,
  RevokedGrants,
  SessionId,
  SessionInfo,
} from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { adminScope } from './scope.js';

const USER = '/admin/v1/users/:username';

const User = z.object({ username: z.string().describe('the username, any case') });
const UserSession = User.extend({ id: SessionId });
const UserGrant = User.extend({ id: GrantId });

const NO_USER = { description: 'no such user', problem: ['user_not_found'] } as const;

/**
 * The admin REST API of a user's browser sessions and grants, under `/admin/v1/users/{username}`:
 * list them a page at a time, end a session or all of them (revoking the grants made in them),
 * revoke a grant or all of them — refresh tokens stop working at once and access tokens are
 * refused by introspection and token review on every replica. Reading needs an API key holding
 * `sessions:read`, ending and revoking `sessions:write`; errors are RFC 9457 problems.
 */
export async function adminSessionRoutes(app: FastifyInstance): Promise<void> {
  const { route } = adminScope(app, 'session');

  app.get(
    `${USER}/sessions`,
    route(
      {
        operationId: 'listUserSessions',
        scope: 'sessions:read',
        summary: "A user's signed-in browsers",
        description:
          'Live sessions (neither ended nor expired), oldest first: where each signed in from, when it last signed the browser in to an application, and to which ones.',
        tags: ['sessions'],
        params: User,
        query: PageQuery,
        responses: {
          200: { description: 'one page of sessions', json: pageOf(SessionInfo) },
          400: { description: 'a bad limit or cursor', problem: ['invalid_session'] },
          404: NO_USER,
        },
      },
      // listUserSessions takes the query as sent: it checks it again for the CLI.
      ({ params }, request) => listUserSessions(request.admin, params.username, request.query),
    ),
  );

  app.delete(
    `${USER}/sessions/:id`,
    route(
      {
        operationId: 'revokeUserSession',
        scope: 'sessions:write',
        summary: "Ends a user's browser session",
        description:
          'The browser is signed out at its next request; the grants made in the session are revoked.',
        tags: ['sessions'],
        params: UserSession,
        responses: {
          204: { description: 'the session ended' },
          400: { description: 'a malformed session id', problem: ['invalid_session'] },
          404: {
            description: 'no such user, or no such live session of theirs',
            problem: ['user_not_found', 'session_not_found'],
          },
        },
      },
      async ({ params }, request, reply) => {
        await endUserSession(request.admin, params.username, params.id);
        return reply.status(204).send();
      },
    ),
  );

  app.delete(
    `${USER}/sessions`,
    route(
      {
        operationId: 'revokeUserSessions',
        scope: 'sessions:write',
        summary: 'Ends every browser session of a user',
        description: 'Answers how many sessions ended and how many grants made in them were revoked.',
        tags: ['sessions'],
        params: User,
        responses: { 200: { description: 'what ended', json: EndedSessions }, 404: NO_USER },
      },
      ({ params }, request) => endAllUserSessions(request.admin, params.username),
    ),
  );

  app.get(
    `${USER}/grants`,
    route(
      {
        operationId: 'listUserGrants',
        scope: 'sessions:read',
        summary: "A user's grants to applications",
        description:
          'Live grants (neither revoked nor expired), oldest first: the client, the scopes, and the time and address of the latest token request on each.',
        tags: ['sessions'],
        params: User,
        query: PageQuery,
        responses: {
          200: { description: 'one page of grants', json: pageOf(GrantInfo) },
          400: { description: 'a bad limit or cursor', problem: ['invalid_grant_id'] },
          404: NO_USER,
        },
      },
      { object: 'grant' },
      ({ params }, request) => listUserGrants(request.admin, params.username, request.query),
    ),
  );

  app.delete(
    `${USER}/grants/:id`,
    route(
      {
        operationId: 'revokeUserGrant',
        scope: 'sessions:write',
        summary: "Revokes a user's grant",
        description:
          'Its refresh tokens stop working at once; its access tokens are refused by introspection and token review.',
        tags: ['sessions'],
        params: UserGrant,
        responses: {
          204: { description: 'the grant is revoked' },
          400: { description: 'a malformed grant id', problem: ['invalid_grant_id'] },
          404: {
            description: 'no such user, or no such live grant of theirs',
            problem: ['user_not_found', 'grant_not_found'],
          },
        },
      },
      { object: 'grant' },
      async ({ params }, request, reply) => {
        await revokeUserGrant(request.admin, params.username, params.id);
        return reply.status(204).send();
      },
    ),
  );

  app.delete(
    `${USER}/grants`,
    route(
      {
        operationId: 'revokeUserGrants',
        scope: 'sessions:write',
        summary: 'Revokes every grant of a user',
        description:
          'Every application must ask the user to sign in again; answers how many grants were revoked.',
        tags: ['sessions'],
        params: User,
        responses: { 200: { description: 'how many were revoked', json: RevokedGrants }, 404: NO_USER },
      },
      { object: 'grant' },
      ({ params }, request) => revokeAllUserGrants(request.admin, params.username),
    ),
  );
}
