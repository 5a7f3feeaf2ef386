import { apiKeyView, createApiKey, listApiKeyPage, revokeApiKey } from '@idgate/core/admin';
import { ApiKey, CreateApiKeyInput, CreatedApiKey, PageQuery, pageOf } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { refuseControlCharacters } from './body-strings.js';
import { adminScope } from './scope.js';

const BASE = '/admin/v1/api-keys';
const TAGS = ['api-keys'];

/**
 * The admin REST API of API keys, under `/admin/v1/api-keys`: list (prefixes, never keys),
 * create (the key answered once, optionally expiring) and revoke. Every route needs an API key
 * with the `admin` scope; errors are RFC 9457 problems.
 */
export async function adminApiKeyRoutes(app: FastifyInstance): Promise<void> {
  const { root, route } = adminScope(app, 'api_key');

  app.get(
    BASE,
    route(
      {
        operationId: 'listApiKeys',
        summary: 'List API keys',
        description: 'By creation time, revoked and expired ones included, a page at a time; never a key.',
        tags: TAGS,
        query: PageQuery,
        responses: {
          200: { description: 'one page of API keys', json: pageOf(ApiKey) },
          400: { description: 'a bad limit or cursor', problem: ['invalid_api_key'] },
        },
      },
      ({ query }, request) => listApiKeyPage(request.admin, query),
    ),
  );

  app.post(
    BASE,
    route(
      {
        operationId: 'createApiKey',
        summary: 'Create an API key',
        description: 'The key is answered only this once; with `expiresIn` (seconds) it stops working then.',
        tags: TAGS,
        body: { json: CreateApiKeyInput, required: true },
        responses: {
          201: { description: 'the key', json: CreatedApiKey, headers: { Location: 'the key’s URL' } },
          400: { description: 'a bad field, named', problem: ['invalid_api_key'] },
        },
      },
      { json: 'an API key', check: (body) => refuseControlCharacters(body, 'api_key') },
      async ({ body }, request, reply) => {
        const { record, key } = await createApiKey(request.admin, body);
        return reply
          .status(201)
          .header('location', `${root}${BASE}/${record.id}`)
          .send({ ...apiKeyView(record), key });
      },
    ),
  );

  app.delete(
    `${BASE}/:id`,
    route(
      {
        operationId: 'revokeApiKey',
        summary: 'Revoke an API key',
        description: 'By its id or its prefix; it stops working at once on every replica.',
        tags: TAGS,
        params: z.object({ id: z.string() }),
        responses: {
          204: { description: 'revoked' },
          404: { description: 'no such live key', problem: ['api_key_not_found'] },
        },
      },
      async ({ params }, request, reply) => {
        await revokeApiKey(request.admin, params.id);
        return reply.status(204).send();
      },
    ),
  );
}
