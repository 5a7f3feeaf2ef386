import {
  endClientSessions,
  listClientGrants,
  listClientSessions,
  revokeAllClientGrants,
  revokeClientGrant,
} from '@idgate/core/admin';
import {
  ClientGrantInfo,
  ClientSessionInfo,
  EndedSessions,
  GrantId,
  PageQuery,
  pageOf,
  RevokedGrants,
} from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { adminScope } from './scope.js';

const CLIENT = '/admin/v1/clients/:clientId';
const Client = z.object({ clientId: z.string().describe('the client id') });
const NO_CLIENT = { description: 'no such client', problem: ['client_not_found'] } as const;

/**
 * The admin REST API of a client's browser sessions and grants, under
 * `/admin/v1/clients/{clientId}`: list them a page at a time, end the sessions that signed in to
 * it, revoke one grant or all. Reading needs `sessions:read`, ending and revoking `sessions:write`.
 */
export async function adminClientSessionRoutes(app: FastifyInstance): Promise<void> {
  const { route } = adminScope(app, 'session');

  app.get(
    `${CLIENT}/sessions`,
    route(
      {
        operationId: 'listClientSessions',
        scope: 'sessions:read',
        summary: 'The browser sessions that signed in to a client',
        description:
          'Live sessions in which a grant of the client was made, oldest first, with their user id.',
        tags: ['sessions'],
        params: Client,
        query: PageQuery,
        responses: {
          200: { description: 'one page of sessions', json: pageOf(ClientSessionInfo) },
          400: { description: 'a bad limit or cursor', problem: ['invalid_session'] },
          404: NO_CLIENT,
        },
      },
      ({ params }, request) => listClientSessions(request.admin, params.clientId, request.query),
    ),
  );

  app.delete(
    `${CLIENT}/sessions`,
    route(
      {
        operationId: 'revokeClientSessions',
        scope: 'sessions:write',
        summary: 'Ends every browser session that signed in to a client',
        description:
          'The browsers are signed out of every application (a session is single sign-on); the grants made in them are revoked. Answers how many ended and how many grants were revoked.',
        tags: ['sessions'],
        params: Client,
        responses: { 200: { description: 'what ended', json: EndedSessions }, 404: NO_CLIENT },
      },
      ({ params }, request) => endClientSessions(request.admin, params.clientId),
    ),
  );

  app.get(
    `${CLIENT}/grants`,
    route(
      {
        operationId: 'listClientGrants',
        scope: 'sessions:read',
        summary: "A client's grants",
        description:
          'Live grants of the client (neither revoked nor expired), oldest first, with their user id.',
        tags: ['sessions'],
        params: Client,
        query: PageQuery,
        responses: {
          200: { description: 'one page of grants', json: pageOf(ClientGrantInfo) },
          400: { description: 'a bad limit or cursor', problem: ['invalid_grant_id'] },
          404: NO_CLIENT,
        },
      },
      { object: 'grant' },
      ({ params }, request) => listClientGrants(request.admin, params.clientId, request.query),
    ),
  );

  app.delete(
    `${CLIENT}/grants/:id`,
    route(
      {
        operationId: 'revokeClientGrant',
        scope: 'sessions:write',
        summary: "Revokes a client's grant",
        description:
          'Its refresh tokens stop working at once; its access tokens are refused by introspection and token review on every replica.',
        tags: ['sessions'],
        params: Client.extend({ id: GrantId }),
        responses: {
          204: { description: 'the grant is revoked' },
          400: { description: 'a malformed grant id', problem: ['invalid_grant_id'] },
          404: {
            description: 'no such client, or no such live grant of it',
            problem: ['client_not_found', 'grant_not_found'],
          },
        },
      },
      { object: 'grant' },
      async ({ params }, request, reply) => {
        await revokeClientGrant(request.admin, params.clientId, params.id);
        return reply.status(204).send();
      },
    ),
  );

  app.delete(
    `${CLIENT}/grants`,
    route(
      {
        operationId: 'revokeClientGrants',
        scope: 'sessions:write',
        summary: 'Revokes every grant of a client',
        description:
          'Every user must sign in to the client again; answers how many grants were revoked. Its own client_credentials tokens are not grants: a not-before of the client ends them.',
        tags: ['sessions'],
        params: Client,
        responses: { 200: { description: 'how many were revoked', json: RevokedGrants }, 404: NO_CLIENT },
      },
      { object: 'grant' },
      ({ params }, request) => revokeAllClientGrants(request.admin, params.clientId),
    ),
  );
}
