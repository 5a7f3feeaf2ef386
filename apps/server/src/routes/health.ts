import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Services } from '../services.js';
import { pendingMigrations } from '../storage/index.js';

/** `GET /healthz` (the process answers) and `GET /readyz` (it can serve: database, migrations, keys). */
export async function healthRoutes(
  app: FastifyInstance,
  { services }: { services: Services },
): Promise<void> {
  app.get('/healthz', { logLevel: 'warn' }, async (_request, reply) =>
    reply.header('Cache-Control', 'no-store').send({ status: 'ok' }),
  );

  app.get('/readyz', { logLevel: 'warn' }, async (request, reply) => {
    reply.header('Cache-Control', 'no-store');
    const checks: Record<string, 'ok' | 'failing'> = { database: 'ok', migrations: 'ok', keys: 'ok' };
    try {
      await sql`select 1`.execute(services.database.db);
      if ((await pendingMigrations(services.database)).length > 0) checks.migrations = 'failing';
    } catch (err) {
      request.log.warn({ err }, 'readiness: database check failed');
      checks.database = 'failing';
      checks.migrations = 'failing';
    }
    if (services.keys().jwks().keys.length === 0) checks.keys = 'failing';
    const ready = Object.values(checks).every((state) => state === 'ok');
    return reply.status(ready ? 200 : 503).send({ status: ready ? 'ok' : 'unavailable', checks });
  });
}
