import { addCluster, getCluster, isAdminError, listClusters, removeCluster } from '@idgate/core';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiKeyAuthenticator } from '../../http/api-key-auth.js';
import { sendProblem } from '../../http/errors.js';

const BASE = '/admin/v1/clusters';

type Named = { Params: { name: string } };

/**
 * The admin REST API of Kubernetes clusters, under `/admin/v1`: list, read, register and remove.
 * Registering answers the cluster's `tokenreview` API key once (201, `no-store`); removing revokes
 * the cluster's keys. Every route needs an API key with the `admin` scope; errors are RFC 9457
 * problems.
 */
export async function adminClusterRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  const { admin } = idgate;
  const authenticate = apiKeyAuthenticator(idgate, 'admin');
  const root = idgate.config.issuer.slice(0, -'/oauth'.length);

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('Cache-Control', 'no-store');
    await authenticate(request);
  });
  app.setErrorHandler((error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
    if (isAdminError(error) && error.code === 'not_found') {
      const what = `there is no ${error.object.replaceAll('_', ' ')} ${(error.key ?? '').slice(0, 64)}`;
      return sendProblem(reply, error.status, error.problemCode, what);
    }
    throw error;
  });

  const options = { config: { errorFormat: 'problem' as const } };

  app.get(BASE, options, async () => ({ items: await listClusters(admin) }));

  app.get<Named>(`${BASE}/:name`, options, (request) => getCluster(admin, request.params.name));

  app.post(BASE, options, async (request, reply) => {
    if (!request.headers['content-type']?.toLowerCase().startsWith('application/json')) {
      return sendProblem(reply, 415, 'unsupported_media_type', 'a cluster is sent as application/json');
    }
    const created = await addCluster(admin, request.body, { label: (path) => path || 'body' });
    return reply.status(201).header('Location', `${root}${BASE}/${created.cluster.name}`).send(created);
  });

  app.delete<Named>(`${BASE}/:name`, options, async (request, reply) => {
    await removeCluster(admin, request.params.name);
    return reply.status(204).send();
  });
}
