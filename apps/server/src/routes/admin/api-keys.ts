import { createApiKeyFromInput, listApiKeyPage, parseAdminInput, revokeApiKey } from '@idgate/core/admin';
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
  const { root, requireJson, route } = adminScope(app);

  app.get(
    BASE,
    route({
      operationId: 'listApiKeys',
      summary: 'List API keys',
      description: 'By creation time, revoked and expired ones included, a page at a time; never a key.',
      tags: TAGS,
      query: PageQuery,
      responses: {
        200: { description: 'one page of API keys', json: pageOf(ApiKey) },
        400: { description: 'a bad limit or cursor', problem: ['invalid_api_key'] },
      },
    }),
    async (request) =>
      listApiKeyPage(request.admin, parseAdminInput(PageQuery, request.query ?? {}, 'api_key')),
  );

  app.post(
    BASE,
    route({
      operationId: 'createApiKey',
      summary: 'Create an API key',
      description: 'The key is answered only this once; with `expiresIn` (seconds) it stops working then.',
      tags: TAGS,
      body: { json: CreateApiKeyInput, required: true },
      responses: {
        201: { description: 'the key', json: CreatedApiKey, headers: { Location: 'the key’s URL' } },
        400: { description: 'a bad field, named', problem: ['invalid_api_key'] },
      },
    }),
    async (request, reply) => {
      const refused = requireJson(request, reply, 'an API key');
      if (refused !== undefined) return refused;
      refuseControlCharacters(request.body, 'api_key');
      const created = await createApiKeyFromInput(request.admin, request.body, {
        label: (path) => path || 'body',
      });
      return reply.status(201).header('Location', `${root}${BASE}/${created.id}`).send(created);
    },
  );

  app.delete<{ Params: { id: string } }>(
    `${BASE}/:id`,
    route({
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key',
      description: 'By its id or its prefix; it stops working at once on every replica.',
      tags: TAGS,
      params: z.object({ id: z.string() }),
      responses: {
        204: { description: 'revoked' },
        404: { description: 'no such live key', problem: ['api_key_not_found'] },
      },
    }),
    async (request, reply) => {
      await revokeApiKey(request.admin, request.params.id);
      return reply.status(204).send();
    },
  );
}
