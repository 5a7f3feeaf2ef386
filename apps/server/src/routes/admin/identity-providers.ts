import {
  addIdentityProvider,
  getIdentityProvider,
  isAdminError,
  linkedIdentityView,
  listIdentityProviders,
  listUserIdentities,
  removeIdentityProvider,
  setIdentityProviderDisabled,
} from '@idgate/core';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiKeyAuthenticator } from '../../http/api-key-auth.js';
import { sendProblem } from '../../http/errors.js';

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
  const { idgate } = app;
  const { admin } = idgate;
  const authenticate = apiKeyAuthenticator(idgate, 'admin');
  const root = idgate.config.issuer.slice(0, -'/oauth'.length);

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('Cache-Control', 'no-store');
    await authenticate(request);
  });
  // The server's handler answers every refusal as a problem; a missing object is worded for the
  // API (the use case's message is the CLI's), repeating only the start of what was asked for.
  app.setErrorHandler((error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
    if (isAdminError(error) && error.code === 'not_found') {
      const what = `there is no ${error.object.replaceAll('_', ' ')} ${(error.key ?? '').slice(0, 64)}`;
      return sendProblem(reply, error.status, error.problemCode, what);
    }
    throw error;
  });

  const options = { config: { errorFormat: 'problem' as const } };

  app.get(BASE, options, async () => ({ items: await listIdentityProviders(admin) }));

  app.get<Named>(`${BASE}/:name`, options, (request) => getIdentityProvider(admin, request.params.name));

  app.post(BASE, options, async (request, reply) => {
    if (!request.headers['content-type']?.toLowerCase().startsWith('application/json')) {
      return sendProblem(
        reply,
        415,
        'unsupported_media_type',
        'an identity provider is sent as application/json',
      );
    }
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
