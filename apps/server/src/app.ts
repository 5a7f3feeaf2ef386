import { randomUUID } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import type { IdgateConfig } from './config.js';
import type { AppContext } from './context.js';
import { errorHandling } from './http/errors.js';
import { installFormParser } from './http/form.js';
import { type PageHeaders, pageHeaders } from './http/page-headers.js';
import { redactUrl } from './http/redact.js';
import { RouteCatalog } from './openapi/document.js';
import { PageLooks } from './pages/look.js';
import { adminApiKeyRoutes } from './routes/admin/api-keys.js';
import { adminAuditEventRoutes } from './routes/admin/audit-events.js';
import { adminClientSessionRoutes } from './routes/admin/client-sessions.js';
import { adminClientRoutes } from './routes/admin/clients.js';
import { adminClusterRoutes } from './routes/admin/clusters.js';
import { adminDeclarationRoutes } from './routes/admin/declarations.js';
import { adminGroupRoutes } from './routes/admin/groups.js';
import { adminIdentityProviderRoutes } from './routes/admin/identity-providers.js';
import { adminBlockedAddressRoutes, adminNotBeforeRoutes } from './routes/admin/incident.js';
import { adminSessionRoutes } from './routes/admin/sessions.js';
import { adminSigningKeyRoutes } from './routes/admin/signing-keys.js';
import { adminTrustRoutes } from './routes/admin/trusts.js';
import { adminUserFactorRoutes } from './routes/admin/user-factors.js';
import { adminUserIdentityRoutes } from './routes/admin/user-identities.js';
import { adminUserRoutes } from './routes/admin/users.js';
import { healthRoutes } from './routes/health.js';
import { homeRoutes } from './routes/home.js';
import { metricsRoutes } from './routes/metrics.js';
import { accountRoutes } from './routes/oauth/account.js';
import { tokenReviewRoutes } from './routes/oauth/authenticate.js';
import { authorizeRoutes } from './routes/oauth/authorize.js';
import { deviceRoutes } from './routes/oauth/device.js';
import { deviceAuthorizationRoutes } from './routes/oauth/device-authorization.js';
import { discoveryRoutes } from './routes/oauth/discovery.js';
import { federationRoutes } from './routes/oauth/federation.js';
import { loginRoutes } from './routes/oauth/login.js';
import { logoutRoutes } from './routes/oauth/logout.js';
import { resourceRoutes } from './routes/oauth/resource.js';
import { secondFactorRoutes } from './routes/oauth/second-factor.js';
import { tokenRoutes } from './routes/oauth/token.js';
import { openapiRoutes } from './routes/openapi.js';
import { requestSpans } from './telemetry/request-spans.js';
import type { Tracing } from './telemetry/tracing.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The application context every route works with (see `createAppContext`). */
    readonly idgate: AppContext;
    /** The security headers of the HTML pages, from helmet, computed once (see `pageHeaders`). */
    readonly pageHeaders: PageHeaders;
  }
}

/** What {@link buildApp} composes. */
export interface BuildAppOptions {
  context: AppContext;
  /** A pino logger or its options; `false` for none. Defaults to JSON logs at the configured level. */
  logger?: FastifyServerOptions['logger'];
  /** Where log lines go (for tests that read them); defaults to stdout. */
  logStream?: NodeJS.WritableStream;
  /** A server span per request when tracing is on; absent, no tracing hook is installed. */
  tracing?: Tracing | undefined;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The `trustProxy` setting as fastify takes it. A hop count becomes a function trusting the last
 * `hops` addresses of the chain (fastify itself now trusts no hop for a bare number, since a
 * count cannot tell the proxy from a client that reached idgate directly: the README says when a
 * count is safe).
 */
function trustedProxies(
  setting: IdgateConfig['trustProxy'],
): NonNullable<FastifyServerOptions['trustProxy']> {
  if (typeof setting !== 'number') return setting;
  return (_address: string, hop: number) => hop < setting;
}

/**
 * Headers every response carries, error or not. The server writes every header name in lower
 * case, the form fastify stores and sends (names are case-insensitive, RFC 9110 §5.1); any other
 * spelling makes a new string per call (12k more instructions per discovery, 8 %; bench/README.md).
 */
function baseHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  reply.header('x-content-type-options', 'nosniff');
}

/**
 * The idgate HTTP application, ready to `listen()` or `inject()`. Logs are JSON with request ids;
 * credentials never reach them: Authorization and Cookie headers are not logged, and secret query
 * parameters are redacted from URLs.
 */
export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { context } = options;
  const logger: NonNullable<FastifyServerOptions['logger']> =
    options.logger ??
    ({
      level: context.config.log.level,
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
  const { health } = context.database;
  // Pages only: @fastify/helmet on every route cost +72 % instructions per warm TokenReview, +147 % per discovery (bench/README.md).
  const pages = pageHeaders(context.config.issuer);
  const errors = errorHandling({
    looks: new PageLooks(context.config),
    pageHeaders: pages,
    baseHeaders,
    storageFailed: (error, log) => health.failed(error, log),
  });
  const app = Fastify({
    logger,
    frameworkErrors: errors.frameworkErrors,
    bodyLimit: context.config.bodyLimit,
    trustProxy: trustedProxies(context.config.trustProxy),
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
  // A callback hook, not an async one: no promise per response (with the other hooks: 18k fewer instructions per discovery, 12 %; bench/README.md).
  app.addHook('onSend', (request, reply, _payload, done) => {
    baseHeaders(request, reply);
    done();
  });
  app.decorate('idgate', context);
  app.decorate('pageHeaders', pages);
  if (options.tracing !== undefined) await app.register(requestSpans, { tracing: options.tracing });
  errors.install(app);
  installFormParser(app);
  // Before any route: the OpenAPI document is made of every route this hook sees.
  const catalog = new RouteCatalog();
  app.addHook('onRoute', catalog.record);
  await app.register(metricsRoutes);
  await app.register(healthRoutes);
  await app.register(homeRoutes);
  await app.register(discoveryRoutes);
  await app.register(tokenRoutes);
  await app.register(deviceAuthorizationRoutes);
  await app.register(tokenReviewRoutes);
  // The pages a browser goes through, with cookies: parsed and set only in this scope, so the
  // machine-facing routes (TokenReview, token, introspection) pay for no cookie hooks.
  await app.register(async (browser) => {
    await browser.register(fastifyCookie);
    await browser.register(authorizeRoutes);
    await browser.register(loginRoutes);
    await browser.register(secondFactorRoutes);
    await browser.register(accountRoutes);
    await browser.register(logoutRoutes);
    await browser.register(federationRoutes);
    await browser.register(deviceRoutes);
  });
  await app.register(resourceRoutes);
  await app.register(adminIdentityProviderRoutes);
  await app.register(adminClusterRoutes);
  await app.register(adminTrustRoutes);
  await app.register(adminSessionRoutes);
  await app.register(adminClientSessionRoutes);
  await app.register(adminNotBeforeRoutes);
  await app.register(adminBlockedAddressRoutes);
  await app.register(adminClientRoutes);
  await app.register(adminApiKeyRoutes);
  await app.register(adminSigningKeyRoutes);
  await app.register(adminUserRoutes);
  await app.register(adminUserIdentityRoutes);
  await app.register(adminUserFactorRoutes);
  await app.register(adminGroupRoutes);
  await app.register(adminAuditEventRoutes);
  await app.register(adminDeclarationRoutes);
  await app.register(openapiRoutes, { catalog });
  return app;
}
