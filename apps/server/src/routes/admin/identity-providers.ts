import {
  addIdentityProvider,
  getIdentityProvider,
  linkedIdentityView,
  listIdentityProviders,
  listUserIdentities,
  refuseProviderPatch,
  refuseTakenProviderName,
  removeIdentityProvider,
  setIdentityProviderDisabled,
  updateIdentityProvider,
} from '@idgate/core/admin';
import {
  IdentityProvider,
  IdentityProviderConfig,
  IdentityProviderPatch,
  LinkedIdentity,
  type ProblemCode,
} from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ResponseDoc } from '../../openapi/route-doc.js';
import { adminScope } from './scope.js';

const BASE = '/admin/v1/identity-providers';
const TAGS = ['identity-providers'];

const NAMED = z.object({
  name: z.string().describe('the provider name, in any case'),
});
const PROVIDER: ResponseDoc = {
  description: 'the identity provider (secret fields shown as "[set]")',
  json: IdentityProvider,
  headers: { ETag: 'its version, for If-Match on PATCH' },
};
const problem = (description: string, ...codes: ProblemCode[]): ResponseDoc => ({
  description,
  problem: codes,
});
/** Where a body field's error points: `body` itself, or the field. */
const label = (path: string) => path || 'body';
const NOT_FOUND = problem('there is no such provider', 'identity_provider_not_found');
const READ_ONLY = problem(
  'the provider is declared in the configuration file: change it there',
  'identity_provider_read_only',
);
const INVALID = problem(
  'the configuration is not valid: the detail names the first bad field (a token client must exist and take user sign-ins)',
  'invalid_identity_provider',
  'invalid_body',
);

/**
 * The admin REST API of identity providers, under `/admin/v1`: list, read, create, change,
 * disable, enable and delete providers, and list a user's linked identities. Each route needs
 * an API key holding the scope it declares; errors are RFC 9457 problems; nothing answered is ever
 * cached, and no answer ever carries a secret (secret fields show as `"[set]"`). Providers
 * declared in the configuration file are listed (source `config`) but read-only: they win a
 * name clash. A provider's view carries its `etag`, also sent as the `ETag` header; `PATCH`
 * honours `If-Match`.
 */
export async function adminIdentityProviderRoutes(app: FastifyInstance): Promise<void> {
  const { route, root } = adminScope(app, 'identity_provider');

  app.get(
    BASE,
    route(
      {
        operationId: 'listIdentityProviders',
        scope: 'identity-providers:read',
        summary: 'List identity providers',
        description: "Those of the configuration file (source `config`) first, then the database's, by name.",
        tags: TAGS,
        responses: {
          200: {
            description: 'every identity provider',
            json: z.object({ items: z.array(IdentityProvider) }),
          },
        },
      },
      async (_input, request) => ({ items: await listIdentityProviders(request.admin) }),
    ),
  );

  app.get(
    `${BASE}/:name`,
    route(
      {
        operationId: 'getIdentityProvider',
        scope: 'identity-providers:read',
        summary: 'An identity provider',
        tags: TAGS,
        params: NAMED,
        responses: { 200: PROVIDER, 404: NOT_FOUND },
      },
      async ({ params }, request, reply) => {
        const provider = await getIdentityProvider(request.admin, params.name);
        return reply.header('etag', provider.etag).send(provider);
      },
    ),
  );

  app.post(
    BASE,
    route(
      {
        operationId: 'createIdentityProvider',
        scope: 'identity-providers:write',
        summary: 'Add an identity provider',
        description: 'Its secrets (`clientSecret`, `bindPassword`) are stored sealed and never shown again.',
        tags: TAGS,
        body: { json: IdentityProviderConfig, required: true },
        responses: {
          201: {
            ...PROVIDER,
            headers: { ...PROVIDER.headers, Location: 'the URL of the new provider' },
          },
          400: INVALID,
          409: problem(
            'the name is taken, in any case (also by a provider of the configuration file)',
            'identity_provider_exists',
          ),
        },
      },
      {
        json: 'an identity provider',
        // A taken name is answered as such, whatever else the body holds.
        check: (body, request) => refuseTakenProviderName(request.admin, body),
      },
      // addIdentityProvider checks the token client too, and seals the secrets.
      async (_input, request, reply) => {
        const provider = await addIdentityProvider(request.admin, request.body, { label });
        return reply
          .status(201)
          .header('location', `${root}${BASE}/${provider.name}`)
          .header('etag', provider.etag)
          .send(provider);
      },
    ),
  );

  app.patch(
    `${BASE}/:name`,
    route(
      {
        operationId: 'updateIdentityProvider',
        scope: 'identity-providers:write',
        summary: "Change an identity provider's settings",
        description:
          'A JSON merge patch (RFC 7396) of the configuration: fields given replace the stored ones, nested ' +
          'objects merge, `null` removes an optional field; the result is checked as a new provider is. ' +
          'A secret given is a rotation (stored sealed, never shown). `name` and `type` cannot change, so ' +
          'the identities linked through the provider keep working. Honours `If-Match`.',
        tags: TAGS,
        params: NAMED,
        body: { json: IdentityProviderPatch, required: true },
        responses: {
          200: PROVIDER,
          400: INVALID,
          404: NOT_FOUND,
          409: READ_ONLY,
          412: problem('If-Match does not name the current version', 'precondition_failed'),
        },
      },
      {
        json: 'a change of an identity provider',
        // A provider of the configuration file is read-only, and a merge patch is an object.
        check: (body, request, params) => refuseProviderPatch(request.admin, params.name, body, { label }),
      },
      // updateIdentityProvider merges the patch and checks the result as a new provider.
      async ({ params }, request, reply) => {
        const provider = await updateIdentityProvider(request.admin, params.name, request.body, {
          label,
          ifMatch: request.headers['if-match'],
        });
        return reply.header('etag', provider.etag).send(provider);
      },
    ),
  );

  for (const [verb, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    app.post(
      `${BASE}/:name/${verb}`,
      route(
        {
          operationId: `${verb}IdentityProvider`,
          scope: 'identity-providers:write',
          summary: disabled
            ? 'Stop offering an identity provider for sign-in'
            : 'Offer a disabled identity provider again',
          tags: TAGS,
          params: NAMED,
          responses: { 200: PROVIDER, 404: NOT_FOUND, 409: READ_ONLY },
        },
        async ({ params }, request, reply) => {
          const { provider } = await setIdentityProviderDisabled(request.admin, params.name, disabled);
          return reply.header('etag', provider.etag).send(provider);
        },
      ),
    );
  }

  app.delete(
    `${BASE}/:name`,
    route(
      {
        operationId: 'deleteIdentityProvider',
        scope: 'identity-providers:write',
        summary: 'Delete an identity provider and every identity linked through it',
        tags: TAGS,
        params: NAMED,
        responses: { 204: { description: 'deleted' }, 404: NOT_FOUND, 409: READ_ONLY },
      },
      async ({ params }, request, reply) => {
        await removeIdentityProvider(request.admin, params.name);
        return reply.status(204).send();
      },
    ),
  );

  app.get(
    '/admin/v1/users/:username/identities',
    route(
      {
        operationId: 'listUserIdentities',
        scope: 'users:read',
        summary: "A user's linked external identities",
        tags: ['users'],
        params: z.object({ username: z.string() }),
        responses: {
          200: {
            description: 'the identities, by provider then subject',
            json: z.object({ items: z.array(LinkedIdentity) }),
          },
          404: problem('there is no such user', 'user_not_found'),
        },
      },
      { object: 'user' },
      async ({ params }, request) => {
        const { identities } = await listUserIdentities(request.admin, params.username);
        return { items: identities.map(linkedIdentityView) };
      },
    ),
  );
}
