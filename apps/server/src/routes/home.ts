import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { sendPage } from '../pages/form-action.js';
import { PageLooks } from '../pages/look.js';
import { html, page } from '../pages/views/html.js';

/** What `GET /` answers a program: what this server is and where its public endpoints are. */
const ServiceIndex = z
  .object({
    service: z.literal('idgate'),
    issuer: z.string(),
    discovery: z.string(),
    jwks: z.string(),
    openapi: z.string(),
    health: z.object({ live: z.string(), ready: z.string() }),
  })
  .meta({ id: 'ServiceIndex', description: "this server's issuer and where its public endpoints are" });
type ServiceIndex = z.infer<typeof ServiceIndex>;

/**
 * `GET /`: a person's browser gets a small page (what this server is, its discovery document,
 * keys, API description and health); a program gets the same as JSON.
 */
export async function homeRoutes(app: FastifyInstance): Promise<void> {
  const { config } = app.idgate;
  const base = new URL(config.issuer).origin;
  const index: ServiceIndex = {
    service: 'idgate',
    issuer: config.issuer,
    discovery: `${config.issuer}/.well-known/openid-configuration`,
    jwks: `${config.issuer}/keys`,
    openapi: `${base}/openapi.json`,
    health: { live: `${base}/healthz`, ready: `${base}/readyz` },
  };
  const body = page({
    title: 'idgate',
    // For operators and developers, in English.
    look: new PageLooks(config).in('en'),
    body: html`<h1>idgate</h1>
<p>An OpenID Connect provider and Kubernetes token service. Applications sign people in here;
Kubernetes clusters check its tokens.</p>
<p class="muted">Issuer: <code>${index.issuer}</code></p>
<ul class="links">
<li><a href="${index.discovery}">OpenID Connect discovery</a></li>
<li><a href="${index.jwks}">Signing keys (JWKS)</a></li>
<li><a href="${index.openapi}">HTTP API (OpenAPI)</a></li>
<li><a href="${index.health.ready}">Readiness</a> · <a href="${index.health.live}">liveness</a></li>
</ul>
<p class="muted">Documentation comes with idgate, in the <code>docs/</code> folder of its source: getting
started, Kubernetes, operating. An administrator manages this server with the <code>idgate</code> CLI or
the admin API.</p>`,
  });
  app.get(
    '/',
    {
      logLevel: 'warn',
      config: {
        errorFormat: ['problem', 'html'],
        doc: {
          operationId: 'getServiceIndex',
          summary: 'What this server is, and where its public endpoints are',
          description: 'A browser (`Accept: text/html`) gets a page with the same links.',
          tags: ['operations'],
          responses: {
            200: { description: 'the issuer and the public endpoints', json: ServiceIndex, html: true },
          },
        },
      },
    },
    (request, reply) => {
      reply.header('vary', 'Accept');
      if (request.headers.accept?.includes('text/html')) return sendPage(reply, 200, body);
      return reply.header('cache-control', 'public, max-age=300').send(index);
    },
  );
}
