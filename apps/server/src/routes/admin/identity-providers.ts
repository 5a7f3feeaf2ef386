import {
  addIdentityProvider,
  getIdentityProvider,
  linkedIdentityView,
  listIdentityProviders,
  listUserIdentities,
  removeIdentityProvider,
  setIdentityProviderDisabled,
} from '@idgate/core';
import type { FastifyInstance } from 'fastify';
import { adminScope } from './scope.js';

const BASE = '/admin/v1/identity-providers';

type Named = { Params: { name: string } };

/**
 * The admin REST API of identity providers, under `/admin/v1`: list, read, create, disable,
 * enable and delete providers, and list a user's linked identities. Every route needs an API key
 * with the `admin` scope; errors are RFC 9457 problems; nothing answered is ever cached, and no
 * answer ever carries a secret (secret fields show as `"[set]"`). Providers declared in the
 * configuration file are listed (source `config`) but read-only: they win a name clash.
 */
export async function adminIdentityProviderRoutes(app: FastifyInstance): Promise<void> {
  const { admin } = app.idgate;
  const { options, root, requireJson } = adminScope(app);

  app.get(BASE, options, async () => ({ items: await listIdentityProviders(admin) }));

  app.get<Named>(`${BASE}/:name`, options, (request) => getIdentityProvider(admin, request.params.name));

  app.post(BASE, options, async (request, reply) => {
    const refused = requireJson(request, reply, 'an identity provider');
    if (refused !== undefined) return refused;
    const provider = await addIdentityProvider(admin, request.body, { label: (path) => path || 'body' });
    return reply.status(201).header('Location', `${root}${BASE}/${provider.name}`).send(provider);
  });

  for (const [verb, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    app.post<Named>(`${BASE}/:name/${verb}`, options, async (request) => {
      const { provider } = await setIdentityProviderDisabled(admin, request.params.name, disabled);
      return provider;
    });
  }

  app.delete<Named>(`${BASE}/:name`, options, async (request, reply) => {
    await removeIdentityProvider(admin, request.params.name);
    return reply.status(204).send();
  });

  app.get<{ Params: { username: string } }>(
    '/admin/v1/users/:username/identities',
    options,
    async (request) => {
      const { identities } = await listUserIdentities(admin, request.params.username);
      return { items: identities.map(linkedIdentityView) };
    },
  );
}
