import { addCluster, getCluster, listClusters, removeCluster, updateCluster } from '@idgate/core/admin';
import { Cluster, CreateClusterInput, CreatedCluster, UpdateClusterInput } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { adminScope } from './scope.js';

const BASE = '/admin/v1/clusters';

const NameParams = z.object({ name: z.string().describe('the cluster name, in any case') });
const NOT_FOUND = { description: 'there is no such cluster', problem: ['cluster_not_found'] } as const;

/**
 * The admin REST API of Kubernetes clusters, under `/admin/v1`: list, read, register, change and remove.
 * Registering answers the cluster's `tokenreview` API key once (201, `no-store`); removing revokes
 * the cluster's keys. Each route needs an API key holding the scope it declares; errors are RFC 9457
 * problems.
 */
export async function adminClusterRoutes(app: FastifyInstance): Promise<void> {
  const { route, root } = adminScope(app, 'cluster');

  app.get(
    BASE,
    route(
      {
        operationId: 'listClusters',
        scope: 'clusters:read',
        summary: 'List Kubernetes clusters, by name',
        tags: ['clusters'],
        responses: { 200: { description: 'the clusters', json: z.object({ items: z.array(Cluster) }) } },
      },
      async (_input, request) => ({ items: await listClusters(request.admin) }),
    ),
  );

  app.get(
    `${BASE}/:name`,
    route(
      {
        operationId: 'getCluster',
        scope: 'clusters:read',
        summary: 'A Kubernetes cluster',
        tags: ['clusters'],
        params: NameParams,
        responses: { 200: { description: 'the cluster', json: Cluster }, 404: NOT_FOUND },
      },
      ({ params }, request) => getCluster(request.admin, params.name),
    ),
  );

  app.post(
    BASE,
    route(
      {
        operationId: 'createCluster',
        scope: 'clusters:write',
        summary: 'Register a Kubernetes cluster',
        description:
          "Registers the cluster's audience, creates a tokenreview API key bound to it (answered once, never again) and gives the shared kubectl client the audience.",
        tags: ['clusters'],
        body: { json: CreateClusterInput },
        responses: {
          201: {
            description: 'the cluster and its API key, which is not shown again',
            json: CreatedCluster,
            headers: { Location: 'the URL of the cluster' },
          },
          400: {
            description: 'a field is not valid: the detail names it',
            problem: ['invalid_cluster'],
          },
          409: { description: 'the name or the audience is taken', problem: ['cluster_exists'] },
        },
      },
      { json: 'a cluster' },
      async (_input, request, reply) => {
        const created = await addCluster(request.admin, request.body, { label: (path) => path || 'body' });
        return reply.status(201).header('location', `${root}${BASE}/${created.cluster.name}`).send(created);
      },
    ),
  );

  app.patch(
    `${BASE}/:name`,
    route(
      {
        operationId: 'updateCluster',
        scope: 'clusters:write',
        summary: 'Rename a Kubernetes cluster or change its audience',
        description:
          'Its API keys stay valid and follow it: a TokenReview through one accepts tokens for the new audience only from then on. The kubectl client gets the new audience instead of the old. Recorded as `admin.changed`.',
        tags: ['clusters'],
        params: NameParams,
        body: { json: UpdateClusterInput, required: true },
        responses: {
          200: { description: 'the cluster as it is now', json: Cluster },
          400: { description: 'a field is not valid: the detail names it', problem: ['invalid_cluster'] },
          404: NOT_FOUND,
          409: { description: 'the name or the audience is another cluster’s', problem: ['cluster_exists'] },
        },
      },
      { json: 'a change of a cluster' },
      ({ params }, request) =>
        updateCluster(request.admin, params.name, request.body, { label: (path) => path || 'body' }),
    ),
  );

  app.delete(
    `${BASE}/:name`,
    route(
      {
        operationId: 'deleteCluster',
        scope: 'clusters:write',
        summary: 'Remove a Kubernetes cluster',
        description: "Its API keys are revoked; the kubectl client loses the cluster's audience.",
        tags: ['clusters'],
        params: NameParams,
        responses: { 204: { description: 'removed' }, 404: NOT_FOUND },
      },
      async ({ params }, request, reply) => {
        await removeCluster(request.admin, params.name);
        return reply.status(204).send();
      },
    ),
  );
}
