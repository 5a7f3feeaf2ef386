import { addCluster, getCluster, listClusters, removeCluster } from '@idgate/core';
import type { FastifyInstance } from 'fastify';
import { adminScope } from './scope.js';

const BASE = '/admin/v1/clusters';

type Named = { Params: { name: string } };

/**
 * The admin REST API of Kubernetes clusters, under `/admin/v1`: list, read, register and remove.
 * Registering answers the cluster's `tokenreview` API key once (201, `no-store`); removing revokes
 * the cluster's keys. Every route needs an API key with the `admin` scope; errors are RFC 9457
 * problems.
 */
export async function adminClusterRoutes(app: FastifyInstance): Promise<void> {
  const { admin } = app.idgate;
  const { options, root, requireJson } = adminScope(app);

  app.get(BASE, options, async () => ({ items: await listClusters(admin) }));

  app.get<Named>(`${BASE}/:name`, options, (request) => getCluster(admin, request.params.name));

  app.post(BASE, options, async (request, reply) => {
    const refused = requireJson(request, reply, 'a cluster');
    if (refused !== undefined) return refused;
    const created = await addCluster(admin, request.body, { label: (path) => path || 'body' });
    return reply.status(201).header('Location', `${root}${BASE}/${created.cluster.name}`).send(created);
  });

  app.delete<Named>(`${BASE}/:name`, options, async (request, reply) => {
    await removeCluster(admin, request.params.name);
    return reply.status(204).send();
  });
}
