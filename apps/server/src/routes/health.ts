import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { z } from 'zod';
import { pendingMigrations } from '../storage/index.js';

const Check = z.enum(['ok', 'failing']);
/** What `/readyz` answers: each check, and `ok` when all pass. */
const Readiness = z.object({
  status: z.enum(['ok', 'unavailable']),
  checks: z.object({ database: Check, migrations: Check, keys: Check }),
});
const Liveness = z.object({ status: z.literal('ok') });

/** `GET /healthz` (the process answers) and `GET /readyz` (it can serve: database, migrations, keys). */
export async function healthRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  app.get(
    '/healthz',
    {
      logLevel: 'warn',
      config: {
        doc: {
          operationId: 'getLiveness',
          summary: 'Liveness: the process answers',
          tags: ['operations'],
          responses: { 200: { description: 'alive', json: Liveness } },
        },
      },
    },
    async (_request, reply) => reply.header('Cache-Control', 'no-store').send({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      logLevel: 'warn',
      config: {
        doc: {
          operationId: 'getReadiness',
          summary: 'Readiness: the database answers, migrations are current, signing keys are loaded',
          tags: ['operations'],
          responses: {
            200: { description: 'ready', json: Readiness },
            503: { description: 'not ready: the failing checks say why', json: Readiness },
          },
        },
      },
    },
    async (request, reply) => {
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
    },
  );
}
