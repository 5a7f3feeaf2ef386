import { OAuthProtocolError } from '@idgate/core';
import { IntrospectionResponse, UserInfo } from '@idgate/schema';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { allowAnyOrigin, installPreflight } from '../../http/cors.js';
import { type FormBody, isFormRequest } from '../../http/form.js';
import type { ResponseDoc, RouteDoc } from '../../openapi/route-doc.js';

// The forms of these endpoints, as their handlers read them (field by field, a repeated field
// refused): what the OpenAPI document shows.
const ClientCredentials = {
  client_id: z.string().optional().describe('client_secret_post, or a public client alone'),
  client_secret: z.string().optional().describe('client_secret_post'),
};
const TokenForm = z.object({
  token: z.string().min(1).describe('the token (only its first 8192 characters are read)'),
  token_type_hint: z.enum(['access_token', 'refresh_token']).optional(),
  ...ClientCredentials,
});
const UserinfoForm = z.object({
  access_token: z
    .string()
    .optional()
    .describe('the access token, when it is not in the Authorization header (RFC 6750 §2.2)'),
});

const CORS_NO_STORE = { 'Cache-Control': 'no-store', 'Access-Control-Allow-Origin': '*' };
const INVALID_CLIENT: ResponseDoc = {
  description: 'client authentication failed',
  oauthError: ['invalid_client'],
  headers: { 'WWW-Authenticate': 'the Basic challenge' },
};
const userinfoDoc = (method: 'GET' | 'POST'): RouteDoc => ({
  operationId: method === 'GET' ? 'getUserinfo' : 'postUserinfo',
  summary: `UserInfo endpoint (OIDC Core §5.3)${method === 'POST' ? ', by POST' : ''}`,
  description:
    'The claims of the user an access token granted `openid` belongs to, by scope (profile, email, groups).',
  tags: ['oauth'],
  security: ['accessToken'],
  ...(method === 'POST' ? { body: { form: UserinfoForm, required: false } } : {}),
  responses: {
    200: { description: 'the claims', json: UserInfo, headers: CORS_NO_STORE },
    400: { description: 'the request is not valid', oauthError: ['invalid_request'] },
    401: {
      description: 'no access token, or not a valid one (RFC 6750 §3.1)',
      oauthError: ['invalid_request', 'invalid_token'],
      headers: { 'WWW-Authenticate': 'the Bearer challenge, with the error' },
    },
    403: {
      description: 'the token was not granted openid',
      oauthError: ['insufficient_scope'],
      headers: { 'WWW-Authenticate': 'the Bearer challenge, with the error' },
    },
  },
});

function formField(body: FormBody | undefined, name: string): string | undefined {
  const value = body?.[name];
  if (Array.isArray(value))
    throw new OAuthProtocolError('invalid_request', `parameter ${name} must not be repeated`);
  return value === '' ? undefined : value;
}

function requireForm(request: FastifyRequest): void {
  if (!isFormRequest(request)) {
    throw new OAuthProtocolError('invalid_request', 'this endpoint takes application/x-www-form-urlencoded');
  }
}

/** The token from `Authorization: Bearer` or, for POST, the `access_token` form field (RFC 6750 §2.1–2.2), not both. */
function bearerToken(request: FastifyRequest<{ Body: FormBody | undefined }>): string | undefined {
  const header = request.headers.authorization;
  const match = header === undefined ? null : /^Bearer[ ]+([\x21-\x7e]+)$/i.exec(header.trim());
  if (header !== undefined && match === null) {
    throw new OAuthProtocolError('invalid_request', 'the Authorization header is not a Bearer token', {
      status: 401,
      headers: { 'WWW-Authenticate': 'Bearer realm="idgate", error="invalid_request"' },
    });
  }
  const fromBody =
    request.method === 'POST' && isFormRequest(request) ? formField(request.body, 'access_token') : undefined;
  if (match !== null && fromBody !== undefined)
    throw new OAuthProtocolError('invalid_request', 'send the access token in one place only');
  return match?.[1] ?? fromBody;
}

/** `GET/POST /oauth/userinfo`, `POST /oauth/revoke` (RFC 7009), `POST /oauth/introspect` (RFC 7662). */
export async function resourceRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  const { core } = idgate;
  const client = (request: FastifyRequest<{ Body: FormBody | undefined }>) =>
    core.authenticateClient({
      authorization: request.headers.authorization,
      clientId: formField(request.body, 'client_id'),
      clientSecret: formField(request.body, 'client_secret'),
    });
  const options = {
    config: { errorFormat: 'oauth' as const },
    onRequest: async (_request: FastifyRequest, reply: import('fastify').FastifyReply) => {
      reply.header('Cache-Control', 'no-store');
      allowAnyOrigin(reply);
    },
  };

  const handleUserinfo = async (request: FastifyRequest<{ Body: FormBody | undefined }>) =>
    core.userinfo(bearerToken(request));
  const documented = (doc: RouteDoc) => ({ ...options, config: { ...options.config, doc } });
  app.get<{ Body: FormBody | undefined }>('/oauth/userinfo', documented(userinfoDoc('GET')), handleUserinfo);
  app.post<{ Body: FormBody | undefined }>(
    '/oauth/userinfo',
    documented(userinfoDoc('POST')),
    handleUserinfo,
  );

  const revocation = documented({
    operationId: 'revokeToken',
    summary: 'Token revocation (RFC 7009)',
    description:
      "An access token is revoked until it expires; a refresh token revokes its whole grant. A token that is unknown, expired or not the caller's is answered 200 too (RFC 7009 §2.2).",
    tags: ['oauth'],
    security: ['clientSecretBasic', 'clientSecretPost', 'anonymous'],
    body: { form: TokenForm },
    responses: {
      200: { description: 'revoked, or nothing to revoke', headers: CORS_NO_STORE },
      400: { description: 'the request is not valid', oauthError: ['invalid_request'] },
      401: INVALID_CLIENT,
    },
  });
  app.post<{ Body: FormBody | undefined }>('/oauth/revoke', revocation, async (request, reply) => {
    requireForm(request);
    const { client: caller } = await client(request);
    const token = formField(request.body, 'token');
    if (token === undefined) throw new OAuthProtocolError('invalid_request', 'token is required');
    await core.revoke(token.slice(0, 8192), formField(request.body, 'token_type_hint'), caller);
    return reply.status(200).send();
  });

  const introspection = documented({
    operationId: 'introspectToken',
    summary: 'Token introspection (RFC 7662)',
    description:
      'For authenticated (confidential) clients: the claims of a live token, `active: false` for anything else.',
    tags: ['oauth'],
    security: ['clientSecretBasic', 'clientSecretPost'],
    body: { form: TokenForm },
    responses: {
      200: { description: "the token's state", json: IntrospectionResponse, headers: CORS_NO_STORE },
      400: { description: 'the request is not valid', oauthError: ['invalid_request'] },
      401: { ...INVALID_CLIENT, description: 'no client authentication, or it failed' },
    },
  });
  app.post<{ Body: FormBody | undefined }>('/oauth/introspect', introspection, async (request) => {
    requireForm(request);
    const { method } = await client(request);
    // RFC 7662 §2.1: the caller must be authorized; a public client proves nothing.
    if (method === 'none') {
      throw new OAuthProtocolError('invalid_client', 'introspection needs client authentication', {
        status: 401,
        headers: { 'WWW-Authenticate': 'Basic realm="idgate", charset="UTF-8"' },
      });
    }
    const token = formField(request.body, 'token');
    if (token === undefined) throw new OAuthProtocolError('invalid_request', 'token is required');
    return core.introspect(token.slice(0, 8192), formField(request.body, 'token_type_hint'));
  });

  installPreflight(app, ['/oauth/userinfo', '/oauth/revoke', '/oauth/token']);
}
