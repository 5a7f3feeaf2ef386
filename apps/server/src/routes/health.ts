import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { pendingMigrations } from '../storage/index.js';

/** `GET /healthz` (the process answers) and `GET /readyz` (it can serve: database, migrations, keys). */
export async function healthRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  app.get('/healthz', { logLevel: 'warn' }, async (_request, reply) =>
    reply.header('Cache-Control', 'no-store').send({ status: 'ok' }),
  );

  app.get('/readyz', { logLevel: 'warn' }, async (request, reply) => {
    reply.header('Cache-Control', 'no-store');
    const checks: Record<string, 'ok' | 'failing'> = { database: 'ok', migrations: 'ok', keys: 'ok' };
    try {
      await sql`select 1`.execute(idgate.database.db);
      if ((await pendingMigrations(idgate.database)).length > 0) checks.migrations = 'failing';
    } catch (err) {
      request.log.warn({ err }, 'readiness: database check failed');
      checks.database = 'failing';
      checks.migrations = 'failing';
    }
    if (idgate.keys().jwks().keys.length === 0) checks.keys = 'failing';
    const ready = Object.values(checks).every((state) => state === 'ok');
    return reply.status(ready ? 200 : 503).send({ status: ready ? 'ok' : 'unavailable', checks });
  });
}
