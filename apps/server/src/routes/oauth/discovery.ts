import { createHash } from 'node:crypto';
import { apiKeyFromAuthorization, type KeyRing } from '@idgate/core';
import { Jwks, ProviderMetadata } from '@idgate/schema';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { AppContext } from '../../context.js';
import { sendProblem } from '../../http/errors.js';
import type { RouteDoc } from '../../openapi/route-doc.js';
import { LOCALES } from '../../pages/i18n.js';

/** A JSON body computed once per key ring, with its strong ETag. */
interface CachedBody {
  ring: KeyRing;
  body: string;
  etag: string;
}

function cached(compute: (ring: KeyRing) => unknown): (ring: KeyRing) => CachedBody {
  let entry: CachedBody | undefined;
  return (ring) => {
    if (entry?.ring !== ring) {
      const body = JSON.stringify(compute(ring));
      entry = { ring, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
    }
    return entry;
  };
}

/**
 * Discovery and JWKS are public, but an Authorization header that is sent must be valid: a live
 * API key of any scope, or an idgate access token. A broken credential is a client bug worth
 * surfacing rather than ignoring.
 */
async function authorizationAcceptable(idgate: AppContext, request: FastifyRequest): Promise<boolean> {
  const header = request.headers.authorization;
  if (header === undefined) return true;
  const presented = apiKeyFromAuthorization(header);
  if (presented === undefined) return false;
  if (presented.startsWith('idg_')) {
    try {
      await idgate.core.authenticateApiKey(presented, null);
      return true;
    } catch {
      return false;
    }
  }
  return (await idgate.core.verifyAccessToken(presented)).ok;
}

function sendCached(
  request: FastifyRequest,
  reply: FastifyReply,
  entry: CachedBody,
  cacheControl: string,
): FastifyReply {
  reply
    .header('etag', entry.etag)
    .header('cache-control', cacheControl)
    .header('access-control-allow-origin', '*')
    .header('vary', 'Authorization');
  if (request.headers['if-none-match']?.split(/\s*,\s*/).includes(entry.etag))
    return reply.status(304).send();
  return reply.type('application/json; charset=utf-8').send(entry.body);
}

const PUBLIC_JSON =
  'Public. An Authorization header is optional, but one that is sent must be valid (a live API key of any scope, or an idgate access token). Answers CORS requests from any origin.';

/** The description of a cached public JSON document: `ETag`, `304`, `Cache-Control`. */
const cachedDoc = (
  operationId: string,
  summary: string,
  description: string,
  json: z.core.$ZodType,
  what: string,
): { config: { doc: RouteDoc } } => ({
  config: {
    doc: {
      operationId,
      summary,
      description: `${description} ${PUBLIC_JSON}`,
      tags: ['oidc'],
      responses: {
        200: {
          description: what,
          json,
          headers: {
            ETag: 'a strong validator of the body (send it back in If-None-Match)',
            'Cache-Control': 'public, with a max-age',
          },
        },
        304: { description: 'not modified: If-None-Match named the current ETag' },
        401: {
          description: 'an Authorization header was sent and is not valid',
          problem: ['authorization_invalid'],
          headers: { 'WWW-Authenticate': 'the Bearer challenge (RFC 6750 §3)' },
        },
      },
    },
  },
});

const DISCOVERY_URLS = [
  [
    '/oauth/.well-known/openid-configuration',
    'getOpenIdConfiguration',
    'OpenID Provider Metadata (OpenID Connect Discovery 1.0 §4)',
  ],
  [
    '/.well-known/openid-configuration',
    'getOpenIdConfigurationAtRoot',
    'OpenID Provider Metadata, at the root of the host',
  ],
  [
    '/.well-known/oauth-authorization-server/oauth',
    'getAuthorizationServerMetadata',
    'OAuth 2.0 Authorization Server Metadata (RFC 8414 §3)',
  ],
] as const;

/** `GET /oauth/.well-known/openid-configuration` (and its aliases) and `GET /oauth/keys`. */
export async function discoveryRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  const metadata = cached((ring) =>
    idgate.core.metadata({
      signingAlgorithms: ring.algorithms,
      tokenEndpointAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation: true,
      introspection: true,
      endSession: true,
      deviceAuthorization: true,
      uiLocales: LOCALES,
    }),
  );
  const jwks = cached((ring) => ring.jwks());

  // The Authorization check runs in the handler rather than in an onRequest hook: these routes
  // are GET (and HEAD) only, so nothing observable runs in between. A request without the header
  // (almost all of them) is answered without a promise: pnpm bench, discovery 0.82-0.83x the bare
  // route this way against 0.72x with one async handler (two paired runs, 2026-11-26).
  const checked = async (request: FastifyRequest, reply: FastifyReply, send: () => FastifyReply) => {
    if (!(await authorizationAcceptable(idgate, request))) {
      reply.header('www-authenticate', 'Bearer realm="idgate", error="invalid_token"');
      return sendProblem(reply, 401, 'authorization_invalid', 'the Authorization header is not valid');
    }
    return send();
  };
  const guarded =
    (send: (request: FastifyRequest, reply: FastifyReply) => FastifyReply) =>
    (request: FastifyRequest, reply: FastifyReply): FastifyReply | Promise<FastifyReply> =>
      request.headers.authorization === undefined
        ? send(request, reply)
        : checked(request, reply, () => send(request, reply));

  const discovery = guarded((request, reply) =>
    sendCached(request, reply, metadata(idgate.keys()), 'public, max-age=300'),
  );
  for (const [url, operationId, summary] of DISCOVERY_URLS) {
    app.get(
      url,
      cachedDoc(
        operationId,
        summary,
        'The same metadata at each of its three addresses: endpoints, supported grants, scopes, signing algorithms.',
        ProviderMetadata,
        'the provider metadata',
      ),
      discovery,
    );
  }
  app.get(
    '/oauth/keys',
    cachedDoc(
      'getJwks',
      'JSON Web Key Set (RFC 7517 §5)',
      "The public keys tokens are signed with: the active key, and retired keys while tokens they signed may still be live. The provider metadata's jwks_uri.",
      Jwks,
      'the public signing keys',
    ),
    guarded((request, reply) => sendCached(request, reply, jwks(idgate.keys()), 'public, max-age=60')),
  );
}
