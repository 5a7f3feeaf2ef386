import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { installErrorHandler } from './http/errors.js';
import { installFormParser } from './http/form.js';
import { redactUrl } from './http/redact.js';
import { adminIdentityProviderRoutes } from './routes/admin/identity-providers.js';
import { healthRoutes } from './routes/health.js';
import { metricsRoutes } from './routes/metrics.js';
import { tokenReviewRoutes } from './routes/oauth/authenticate.js';
import { authorizeRoutes } from './routes/oauth/authorize.js';
import { discoveryRoutes } from './routes/oauth/discovery.js';
import { federationRoutes } from './routes/oauth/federation.js';
import { loginRoutes } from './routes/oauth/login.js';
import { logoutRoutes } from './routes/oauth/logout.js';
import { resourceRoutes } from './routes/oauth/resource.js';
import { tokenRoutes } from './routes/oauth/token.js';
import { openapiRoutes } from './routes/openapi.js';
import type { Services } from './services.js';

/** What {@link buildApp} composes. */
export interface BuildAppOptions {
  services: Services;
  /** A pino logger or its options; `false` for none. Defaults to JSON logs at the configured level. */
  logger?: FastifyServerOptions['logger'];
  /** Where log lines go (for tests that read them); defaults to stdout. */
  logStream?: NodeJS.WritableStream;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The idgate HTTP application, ready to `listen()` or `inject()`. Logs are JSON with request ids;
 * credentials never reach them: Authorization and Cookie headers are not logged, and secret query
 * parameters are redacted from URLs.
 */
export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { services } = options;
  const logger: NonNullable<FastifyServerOptions['logger']> =
    options.logger ??
    ({
      level: services.config.log.level,
      ...(options.logStream === undefined ? {} : { stream: options.logStream }),
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'],
        censor: '[redacted]',
      },
      serializers: {
        req: (req: { id: string; method: string; url: string; ip?: string }) => ({
          id: req.id,
          method: req.method,
          url: redactUrl(req.url),
          remoteAddress: req.ip,
        }),
      },
    } as NonNullable<FastifyServerOptions['logger']>);
  const app = Fastify({
    logger,
    bodyLimit: services.config.bodyLimit,
    trustProxy: services.config.trustProxy,
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true },
    // Bodies are checked as their zod schemas check them: a value of the wrong type is refused,
    // never coerced (fastify's default turns 42 into "42"). Coercion is for querystrings and
    // params, which no route validates.
    ajv: { customOptions: { coerceTypes: false } },
    return503OnClosing: true,
  });
  // A callback hook, not an async one: no promise per response.
  app.addHook('onSend', (request, reply, _payload, done) => {
    reply.header('X-Request-Id', request.id);
    reply.header('X-Content-Type-Options', 'nosniff');
    done();
  });
  installErrorHandler(app);
  installFormParser(app);
  await app.register(metricsRoutes, { services });
  await app.register(healthRoutes, { services });
  await app.register(discoveryRoutes, { services });
  await app.register(tokenRoutes, { services });
  await app.register(tokenReviewRoutes, { services });
  await app.register(authorizeRoutes, { services });
  await app.register(loginRoutes, { services });
  await app.register(logoutRoutes, { services });
  await app.register(resourceRoutes, { services });
  await app.register(federationRoutes, { services });
  await app.register(adminIdentityProviderRoutes, { services });
  await app.register(openapiRoutes, { services });
  return app;
}
