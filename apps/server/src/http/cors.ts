import type { FastifyInstance, FastifyReply } from 'fastify';
import type { RouteDoc } from '../openapi/route-doc.js';

/**
 * Endpoints a browser application calls directly (a public client exchanging its code, reading
 * userinfo, fetching keys). They take no cookies, only bearer tokens and client credentials, so
 * any origin may call them.
 */
export function allowAnyOrigin(reply: FastifyReply): void {
  reply.header('access-control-allow-origin', '*');
}

/**
 * Answers CORS preflights for `paths`; each is documented as `preflight<Last segment>`.
 * @example installPreflight(app, ['/oauth/userinfo']) // OPTIONS /oauth/userinfo, operationId preflightUserinfo
 */
export function installPreflight(app: FastifyInstance, paths: readonly string[]): void {
  for (const path of paths) {
    const last = path.slice(path.lastIndexOf('/') + 1).replace(/[^A-Za-z0-9]/g, '');
    const doc: RouteDoc = {
      operationId: `preflight${last.charAt(0).toUpperCase()}${last.slice(1)}`,
      summary: `CORS preflight of ${path}`,
      description:
        'Any origin may call the endpoint with GET or POST, with Authorization, Content-Type and DPoP headers.',
      tags: ['oauth'],
      responses: {
        204: {
          description: 'the request may be sent',
          headers: {
            'Access-Control-Allow-Origin': '*',
            'Access-Control-Allow-Methods': 'GET, POST',
            'Access-Control-Allow-Headers': 'Authorization, Content-Type, DPoP',
            'Access-Control-Max-Age': 'seconds the answer may be cached: 600',
          },
        },
      },
    };
    app.options(path, { config: { doc } }, async (_request, reply) =>
      reply
        .status(204)
        .header('access-control-allow-origin', '*')
        .header('access-control-allow-methods', 'GET, POST')
        .header('access-control-allow-headers', 'Authorization, Content-Type, DPoP')
        .header('access-control-max-age', '600')
        .send(),
    );
  }
}
