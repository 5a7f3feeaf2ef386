import {
  addIdentityProvider,
  getIdentityProvider,
  linkedIdentityView,
  listIdentityProviders,
  listUserIdentities,
  removeIdentityProvider,
  setIdentityProviderDisabled,
} from '@idgate/core';
import { IdentityProvider, IdentityProviderConfig, LinkedIdentity } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { adminScope } from './scope.js';

const BASE = '/admin/v1/identity-providers';

type Named = { Params: { name: string } };

const NameParams = z.object({ name: z.string().describe('the identity provider name, in any case') });
const PROVIDER = {
  description: 'the identity provider (secret fields show as "[set]")',
  json: IdentityProvider,
};
const NOT_FOUND = {
  description: 'there is no such identity provider',
  problem: ['identity_provider_not_found'],
} as const;
const READ_ONLY = {
  description: 'the provider is declared in the configuration file, and read-only',
  problem: ['identity_provider_read_only'],
} as const;
const TAGS = ['identity-providers'];

/**
 * The admin REST API of identity providers, under `/admin/v1`: list, read, create, disable,
 * enable and delete providers, and list a user's linked identities. Every route needs an API key
 * with the `admin` scope; errors are RFC 9457 problems; nothing answered is ever cached, and no
 * answer ever carries a secret (secret fields show as `"[set]"`). Providers declared in the
 * configuration file are listed (source `config`) but read-only: they win a name clash.
 */
export async function adminIdentityProviderRoutes(app: FastifyInstance): Promise<void> {
  const { admin } = app.idgate;
  const { route, root, requireJson } = adminScope(app);

  app.get(
    BASE,
    route({
      operationId: 'listIdentityProviders',
      summary: "List identity providers: the configuration file's (source config), then the database's",
      tags: TAGS,
      responses: {
        200: { description: 'the providers', json: z.object({ items: z.array(IdentityProvider) }) },
      },
    }),
    async () => ({ items: await listIdentityProviders(admin) }),
  );

  app.get<Named>(
    `${BASE}/:name`,
    route({
      operationId: 'getIdentityProvider',
      summary: 'An identity provider',
      tags: TAGS,
      params: NameParams,
      responses: { 200: PROVIDER, 404: NOT_FOUND },
    }),
    (request) => getIdentityProvider(admin, request.params.name),
  );

  app.post(
    BASE,
    route({
      operationId: 'createIdentityProvider',
      summary: 'Add an identity provider (secrets are stored sealed)',
      tags: TAGS,
      body: { json: IdentityProviderConfig },
      responses: {
        201: { ...PROVIDER, headers: { Location: 'the URL of the provider' } },
        400: {
          description: 'a field is not valid: the detail names it',
          problem: ['invalid_identity_provider'],
        },
        409: { description: 'the name is taken, in any case', problem: ['identity_provider_exists'] },
      },
    }),
    async (request, reply) => {
      const refused = requireJson(request, reply, 'an identity provider');
      if (refused !== undefined) return refused;
      const provider = await addIdentityProvider(admin, request.body, { label: (path) => path || 'body' });
      return reply.status(201).header('Location', `${root}${BASE}/${provider.name}`).send(provider);
    },
  );

  for (const [verb, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    app.post<Named>(
      `${BASE}/:name/${verb}`,
      route({
        operationId: `${verb}IdentityProvider`,
        summary: `${disabled ? 'Disable' : 'Enable'} an identity provider`,
        tags: TAGS,
        params: NameParams,
        responses: { 200: PROVIDER, 404: NOT_FOUND, 409: READ_ONLY },
      }),
      async (request) => {
        const { provider } = await setIdentityProviderDisabled(admin, request.params.name, disabled);
        return provider;
      },
    );
  }

  app.delete<Named>(
    `${BASE}/:name`,
    route({
      operationId: 'deleteIdentityProvider',
      summary: 'Delete an identity provider and every identity linked through it',
      tags: TAGS,
      params: NameParams,
      responses: { 204: { description: 'deleted' }, 404: NOT_FOUND, 409: READ_ONLY },
    }),
    async (request, reply) => {
      await removeIdentityProvider(admin, request.params.name);
      return reply.status(204).send();
    },
  );

  app.get<{ Params: { username: string } }>(
    '/admin/v1/users/:username/identities',
    route({
      operationId: 'listUserIdentities',
      summary: "A user's linked external identities",
      tags: ['identities'],
      params: z.object({ username: z.string() }),
      responses: {
        200: { description: 'the identities', json: z.object({ items: z.array(LinkedIdentity) }) },
        404: { description: 'there is no such user', problem: ['user_not_found'] },
      },
    }),
    async (request) => {
      const { identities } = await listUserIdentities(admin, request.params.username);
      return { items: identities.map(linkedIdentityView) };
    },
  );
}
