import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * Endpoints a browser application calls directly (a public client exchanging its code, reading
 * userinfo, fetching keys). They take no cookies, only bearer tokens and client credentials, so
 * any origin may call them.
 */
export function allowAnyOrigin(reply: FastifyReply): void {
  reply.header('Access-Control-Allow-Origin', '*');
}

/** Answers CORS preflights for `paths`. */
export function installPreflight(app: FastifyInstance, paths: readonly string[]): void {
  for (const path of paths) {
    app.options(path, async (_request, reply) =>
      reply
        .status(204)
        .header('Access-Control-Allow-Origin', '*')
        .header('Access-Control-Allow-Methods', 'GET, POST')
        .header('Access-Control-Allow-Headers', 'Authorization, Content-Type, DPoP')
        .header('Access-Control-Max-Age', '600')
        .send(),
    );
  }
}
