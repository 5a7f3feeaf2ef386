import { addTrust, getTrust, listTrusts, removeTrust, testTrust, updateTrust } from '@idgate/core/admin';
import { CreateTrustInput, Trust, TrustEvaluation, TrustTestInput, UpdateTrustInput } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { adminScope } from './scope.js';

const BASE = '/admin/v1/trusts';

const NameParams = z.object({ name: z.string().describe('the trust name, in any case') });
const NOT_FOUND = { description: 'there is no such trust', problem: ['trust_not_found'] } as const;
const INVALID = {
  description: 'a field is not valid: the detail names it',
  problem: ['invalid_trust'],
} as const;

/**
 * The admin REST API of trusts (token exchange, RFC 8693), under `/admin/v1`: list, read, declare,
 * change, remove, and test a subject token against one (issuing nothing). Each route needs an API
 * key holding the scope it declares; errors are RFC 9457 problems.
 */
export async function adminTrustRoutes(app: FastifyInstance): Promise<void> {
  const { route, root } = adminScope(app, 'trust');
  const { core } = app.idgate;

  app.get(
    BASE,
    route(
      {
        operationId: 'listTrusts',
        scope: 'trusts:read',
        summary: 'List trusts of external issuers, by name',
        tags: ['trusts'],
        responses: { 200: { description: 'the trusts', json: z.object({ items: z.array(Trust) }) } },
      },
      async (_input, request) => ({ items: await listTrusts(request.admin) }),
    ),
  );

  app.get(
    `${BASE}/:name`,
    route(
      {
        operationId: 'getTrust',
        scope: 'trusts:read',
        summary: 'A trust',
        tags: ['trusts'],
        params: NameParams,
        responses: { 200: { description: 'the trust', json: Trust }, 404: NOT_FOUND },
      },
      ({ params }, request) => getTrust(request.admin, params.name),
    ),
  );

  app.post(
    BASE,
    route(
      {
        operationId: 'createTrust',
        scope: 'trusts:write',
        summary: 'Declare a trust of an external issuer',
        description:
          'Tokens of the issuer carrying the audience, whose claims satisfy the CEL condition, are exchanged (RFC 8693) at the token endpoint for short-lived access tokens to the clusters named.',
        tags: ['trusts'],
        body: { json: CreateTrustInput },
        responses: {
          201: { description: 'the trust', json: Trust, headers: { Location: 'the URL of the trust' } },
          400: INVALID,
          409: { description: 'the name is taken', problem: ['trust_exists'] },
        },
      },
      { json: 'a trust' },
      async (_input, request, reply) => {
        const created = await addTrust(request.admin, request.body, { label: (path) => path || 'body' });
        return reply.status(201).header('location', `${root}${BASE}/${created.name}`).send(created);
      },
    ),
  );

  app.patch(
    `${BASE}/:name`,
    route(
      {
        operationId: 'updateTrust',
        scope: 'trusts:write',
        summary: 'Change a trust',
        description: 'Fields left out stay; null clears jwks, discoveryUrl or condition.',
        tags: ['trusts'],
        params: NameParams,
        body: { json: UpdateTrustInput },
        responses: { 200: { description: 'the trust', json: Trust }, 400: INVALID, 404: NOT_FOUND },
      },
      { json: 'a change of a trust' },
      ({ params }, request) =>
        updateTrust(request.admin, params.name, request.body, { label: (path) => path || 'body' }),
    ),
  );

  app.delete(
    `${BASE}/:name`,
    route(
      {
        operationId: 'deleteTrust',
        scope: 'trusts:write',
        summary: 'Remove a trust',
        description: 'The tokens exchanged under it stop being accepted at once.',
        tags: ['trusts'],
        params: NameParams,
        responses: { 204: { description: 'removed' }, 404: NOT_FOUND },
      },
      async ({ params }, request, reply) => {
        await removeTrust(request.admin, params.name);
        return reply.status(204).send();
      },
    ),
  );

  app.post(
    `${BASE}/:name/test`,
    route(
      {
        operationId: 'testTrust',
        scope: 'trusts:read',
        summary: 'Evaluate a subject token against a trust, issuing nothing',
        description:
          'Says whether the trust accepts the token (signature, issuer, audience, expiry, condition, username; with cluster, whether it is allowed), which rule failed, and what identity and clusters would result. The jti is not spent.',
        tags: ['trusts'],
        params: NameParams,
        body: { json: TrustTestInput },
        responses: {
          200: { description: 'the evaluation', json: TrustEvaluation },
          400: INVALID,
          404: NOT_FOUND,
        },
      },
      { json: 'a subject token' },
      ({ params }, request) =>
        testTrust(request.admin, core.trustKeys, params.name, request.body, {
          label: (path) => path || 'body',
        }),
    ),
  );
}
