import {
  apiKeyView,
  createApiKey,
  getApiKey,
  listApiKeyPage,
  revokeApiKey,
  updateApiKey,
} from '@idgate/core/admin';
import {
  ApiKey,
  CreateApiKeyInput,
  CreatedApiKey,
  PageQuery,
  pageOf,
  UpdateApiKeyInput,
} from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { refuseControlCharacters } from './body-strings.js';
import { adminScope } from './scope.js';

const BASE = '/admin/v1/api-keys';
const TAGS = ['api-keys'];

const IdParams = z.object({ id: z.string().describe('the key’s id or its prefix (`idg_…`)') });
const NOT_FOUND = { description: 'there is no such key', problem: ['api_key_not_found'] } as const;
const ESCALATION = {
  description:
    'the API key lacks `api-keys:write`, or a scope the key it would make (or keep working longer) has: the problem’s `scope` names it',
  problem: ['api_key_scope'],
} as const;

/**
 * The admin REST API of API keys, under `/admin/v1/api-keys`: list (prefixes, never keys), read,
 * create (of scopes and roles, the key answered once, optionally expiring), rename or change the
 * expiry, and revoke. Reading needs `api-keys:read`, the rest `api-keys:write` — and a key never
 * makes a key with, or keeps one working longer that has, a scope it does not hold itself. Errors
 * are RFC 9457 problems.
 */
export async function adminApiKeyRoutes(app: FastifyInstance): Promise<void> {
  const { root, route } = adminScope(app, 'api_key');

  app.get(
    BASE,
    route(
      {
        operationId: 'listApiKeys',
        scope: 'api-keys:read',
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
        scope: 'api-keys:write',
        summary: 'Create an API key',
        description:
          'With the `scopes` given and those of the `roles` (`auditor`, `helpdesk`, `operator`, `admin`), each of which the calling key must hold itself. The key is answered only this once; with `expiresIn` (seconds) it stops working then.',
        tags: TAGS,
        body: { json: CreateApiKeyInput, required: true },
        responses: {
          201: { description: 'the key', json: CreatedApiKey, headers: { Location: 'the key’s URL' } },
          400: { description: 'a bad field, named', problem: ['invalid_api_key'] },
          403: ESCALATION,
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

  app.get(
    `${BASE}/:id`,
    route(
      {
        operationId: 'getApiKey',
        scope: 'api-keys:read',
        summary: 'An API key',
        description: 'By its id or its prefix, revoked and expired keys included; never the key.',
        tags: TAGS,
        params: IdParams,
        responses: { 200: { description: 'the key', json: ApiKey }, 404: NOT_FOUND },
      },
      async ({ params }, request) => apiKeyView(await getApiKey(request.admin, params.id)),
    ),
  );

  app.patch(
    `${BASE}/:id`,
    route(
      {
        operationId: 'updateApiKey',
        scope: 'api-keys:write',
        summary: 'Rename an API key or change its expiry',
        description:
          'By its id or its prefix: a new `name`; a new expiry, `expiresIn` seconds from now or `expiresAt` (null: never). Its scopes never change. Any key’s life may be shortened; lengthening it (a later expiry, or none) needs every scope of that key. Recorded as `admin.changed`.',
        tags: TAGS,
        params: IdParams,
        body: { json: UpdateApiKeyInput, required: true },
        responses: {
          200: { description: 'the key as it is now', json: ApiKey },
          400: { description: 'a bad field, named', problem: ['invalid_api_key'] },
          403: ESCALATION,
          404: { description: 'there is no such live key', problem: ['api_key_not_found'] },
        },
      },
      { json: 'a change of an API key', check: (body) => refuseControlCharacters(body, 'api_key') },
      async ({ params, body }, request) => apiKeyView(await updateApiKey(request.admin, params.id, body)),
    ),
  );

  app.delete(
    `${BASE}/:id`,
    route(
      {
        operationId: 'revokeApiKey',
        scope: 'api-keys:write',
        summary: 'Revoke an API key',
        description: 'By its id or its prefix; it stops working at once on every replica.',
        tags: TAGS,
        params: IdParams,
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
