import type { FastifyInstance } from 'fastify';
import { metricsFor, responseObserver } from '../metrics.js';
import type { Services } from '../services.js';

/**
 * `GET /metrics` (Prometheus text format), and the `onResponse` hook that counts every request.
 * Unauthenticated: it is scraped from inside the cluster, and holds no secrets (route patterns and
 * fixed slugs only). Register it before the other routes: a hook reaches the plugins registered
 * after it.
 */
export async function metricsRoutes(
  app: FastifyInstance,
  { services }: { services: Services },
): Promise<void> {
  const metrics = metricsFor(services);

  const observe = responseObserver(metrics);
  // A callback hook, not an async one: no promise per request.
  app.addHook('onResponse', (request, reply, done) => {
    observe(request, reply);
    done();
  });

  app.get('/metrics', { logLevel: 'warn' }, async (_request, reply) => {
    const body = await metrics.registry.metrics();
    return reply.header('Cache-Control', 'no-store').type(metrics.registry.contentType).send(body);
  });
}

// Like fastify-plugin: the hook applies to the whole application, not to this plugin's scope only.
(metricsRoutes as unknown as Record<symbol, unknown>)[Symbol.for('skip-override')] = true;
