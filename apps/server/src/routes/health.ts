import { StorageUnavailableError } from '@idgate/core';
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

/** How long `/readyz` waits for the database before it says not ready (ms): a probe must not hang. */
const READINESS_DEADLINE_MS = 1500;

class ReadinessTimeout extends Error {}

/** `promise`, or a rejection after `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ReadinessTimeout(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * `GET /healthz` (the process answers) and `GET /readyz` (it can serve: database, migrations,
 * keys). Readiness answers within 1.5 s whatever the database does; a database that cannot
 * answer is not logged here on every probe: StorageHealth logs the outage once.
 */
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
    async (_request, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }),
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
            503: {
              description: 'not ready: the failing checks say why',
              json: Readiness,
              headers: { 'Retry-After': 'seconds before asking again' },
            },
          },
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const checks: Record<string, 'ok' | 'failing'> = { database: 'ok', migrations: 'ok', keys: 'ok' };
      const probe = (async () => {
        await sql`select 1`.execute(idgate.database.db);
        return (await pendingMigrations(idgate.database)).length === 0;
      })();
      // A probe given up on still settles later: its failure is not unhandled.
      probe.catch(() => undefined);
      try {
        if (!(await within(probe, READINESS_DEADLINE_MS))) checks.migrations = 'failing';
      } catch (err) {
        if (!(err instanceof StorageUnavailableError || err instanceof ReadinessTimeout))
          request.log.warn({ err }, 'readiness: database check failed');
        checks.database = 'failing';
        checks.migrations = 'failing';
      }
      if (idgate.keys().jwks().keys.length === 0) checks.keys = 'failing';
      const ready = Object.values(checks).every((state) => state === 'ok');
      if (!ready) reply.header('retry-after', '5');
      return reply.status(ready ? 200 : 503).send({ status: ready ? 'ok' : 'unavailable', checks });
    },
  );
}
