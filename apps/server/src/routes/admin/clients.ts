import {
  createClient,
  getClient,
  listClientPage,
  removeClient,
  rotateClientSecret,
  updateClient,
} from '@idgate/core/admin';
import {
  CreatedClient,
  OAuthClient,
  PageQuery,
  pageOf,
  RegisterClientInput,
  RotateClientSecretInput,
  RotatedClientSecret,
  UpdateClientInput,
} from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { refuseControlCharacters } from './body-strings.js';
import { adminScope } from './scope.js';

const BASE = '/admin/v1/clients';
const TAGS = ['clients'];
const ById = z.object({ clientId: z.string() });
const ClientPage = pageOf(OAuthClient);
const ETAG = { ETag: 'the client’s version, for If-Match' };

/** Where a body field's error points: `body` itself, or the field. */
const body = (path: string) => path || 'body';

/**
 * The admin REST API of OAuth clients, under `/admin/v1/clients`: list (a page at a time), read
 * (with its `ETag`), register (a confidential client's secret answered once), change (optionally
 * `If-Match`), rotate the secret (the previous one kept for a grace period) and delete (its grants
 * revoked). Each route needs an API key holding the scope it declares; errors are RFC 9457 problems.
 */
export async function adminClientRoutes(app: FastifyInstance): Promise<void> {
  const { root, route } = adminScope(app, 'client');

  app.get(
    BASE,
    route(
      {
        operationId: 'listClients',
        scope: 'clients:read',
        summary: 'List OAuth clients',
        description: 'By creation time, a page at a time (`?limit=&cursor=`); never a secret.',
        tags: TAGS,
        query: PageQuery,
        responses: {
          200: { description: 'one page of clients', json: ClientPage },
          400: { description: 'a bad limit or cursor', problem: ['invalid_client'] },
        },
      },
      ({ query }, request) => listClientPage(request.admin, query),
    ),
  );

  app.get(
    `${BASE}/:clientId`,
    route(
      {
        operationId: 'getClient',
        scope: 'clients:read',
        summary: 'An OAuth client',
        tags: TAGS,
        params: ById,
        responses: {
          200: { description: 'the client', json: OAuthClient, headers: ETAG },
          404: { description: 'no such client', problem: ['client_not_found'] },
        },
      },
      async ({ params }, request, reply) => {
        const client = await getClient(request.admin, params.clientId);
        return reply.header('etag', client.etag).send(client);
      },
    ),
  );

  app.post(
    BASE,
    route(
      {
        operationId: 'createClient',
        scope: 'clients:write',
        summary: 'Register an OAuth client',
        description:
          'Defaults follow the grants (a refresh_token grant brings the offline_access scope); inconsistent combinations are refused. A confidential client’s secret is answered only this once.',
        tags: TAGS,
        body: { json: RegisterClientInput, required: true },
        responses: {
          201: {
            description: 'the client, with its secret when it is confidential',
            json: CreatedClient,
            headers: { Location: 'the client’s URL', ...ETAG },
          },
          400: { description: 'a bad field, named', problem: ['invalid_client'] },
          409: { description: 'the generated id exists', problem: ['client_exists'] },
        },
      },
      { json: 'a client', check: (body) => refuseControlCharacters(body, 'client') },
      // createClient checks the registration as a whole too (grants, redirect URIs, lifetimes).
      async (_input, request, reply) => {
        const created = await createClient(request.admin, request.body, { label: body });
        return reply
          .status(201)
          .header('location', `${root}${BASE}/${created.clientId}`)
          .header('etag', created.etag)
          .send(created);
      },
    ),
  );

  app.patch(
    `${BASE}/:clientId`,
    route(
      {
        operationId: 'updateClient',
        scope: 'clients:write',
        summary: 'Change an OAuth client',
        description:
          'The fields given replace the current ones; the result is checked like a registration. With `If-Match`, only the version read is changed.',
        tags: TAGS,
        params: ById,
        body: { json: UpdateClientInput, required: true },
        responses: {
          200: { description: 'the changed client', json: OAuthClient, headers: ETAG },
          400: { description: 'a bad field, named', problem: ['invalid_client'] },
          404: { description: 'no such client', problem: ['client_not_found'] },
          409: {
            description: 'the kubectl client’s audiences follow the clusters',
            problem: ['client_read_only'],
          },
          412: { description: 'the client changed since it was read', problem: ['precondition_failed'] },
        },
      },
      { json: 'a change of a client', check: (body) => refuseControlCharacters(body, 'client') },
      // updateClient checks the changed client as a whole too, like a registration.
      async ({ params }, request, reply) => {
        const client = await updateClient(request.admin, params.clientId, request.body, {
          label: body,
          ifMatch: request.headers['if-match'],
        });
        return reply.header('etag', client.etag).send(client);
      },
    ),
  );

  app.post(
    `${BASE}/:clientId/secret`,
    route(
      {
        operationId: 'rotateClientSecret',
        scope: 'clients:write',
        summary: 'Rotate a client secret',
        description:
          'Answers the new secret once. The previous one keeps working for `gracePeriod` seconds (default 0, at most 30 days).',
        tags: TAGS,
        params: ById,
        body: { json: RotateClientSecretInput, required: false },
        responses: {
          200: { description: 'the new secret', json: RotatedClientSecret },
          400: { description: 'a public client, or a bad grace period', problem: ['invalid_client'] },
          404: { description: 'no such client', problem: ['client_not_found'] },
        },
      },
      { json: 'a secret rotation' },
      ({ params }, request) =>
        rotateClientSecret(request.admin, params.clientId, request.body ?? {}, { label: body }),
    ),
  );

  app.delete(
    `${BASE}/:clientId`,
    route(
      {
        operationId: 'deleteClient',
        scope: 'clients:write',
        summary: 'Delete an OAuth client',
        description: 'Its grants are revoked: refresh tokens stop working, access tokens are refused.',
        tags: TAGS,
        params: ById,
        responses: {
          204: { description: 'deleted' },
          404: { description: 'no such client', problem: ['client_not_found'] },
          409: {
            description: 'the kubectl client of registered clusters',
            problem: ['client_read_only'],
          },
        },
      },
      async ({ params }, request, reply) => {
        await removeClient(request.admin, params.clientId);
        return reply.status(204).send();
      },
    ),
  );
}
