import {
  type AdminError,
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
 * A refused administrative action as an RFC 9457 problem: `<object>_not_found` 404,
 * `<object>_exists` and `<object>_read_only` 409, `invalid_<object>` 400.
 */
function sendAdminProblem(reply: FastifyReply, error: AdminError): FastifyReply {
  const { object } = error;
  switch (error.code) {
    case 'not_found':
      // Only the start of what was asked for is repeated.
      return sendProblem(
        reply,
        404,
        `${object}_not_found`,
        `there is no ${object.replaceAll('_', ' ')} ${(error.key ?? '').slice(0, 64)}`,
      );
    case 'conflict':
      return sendProblem(reply, 409, `${object}_exists`, error.message);
    case 'read_only':
      return sendProblem(reply, 409, `${object}_read_only`, error.message);
    case 'invalid_input':
      return sendProblem(reply, 400, `invalid_${object}`, error.message);
  }
}

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
  // What the use cases refuse is answered here; anything else goes on to the server's handler.
  app.setErrorHandler((error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
    if (isAdminError(error)) return sendAdminProblem(reply, error);
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
