import { OAuthProtocolError } from '@idgate/core';
import { FormReader, IntrospectionResponse, UserInfo } from '@idgate/schema';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { callerOf } from '../../http/caller.js';
import { allowAnyOrigin, installPreflight } from '../../http/cors.js';
import { type FormBody, isFormRequest } from '../../http/form.js';
import type { ResponseDoc, RouteDoc } from '../../openapi/route-doc.js';

// The forms of these endpoints: what the OpenAPI document shows, and what the handlers read the
// fields with (a blank field is absent, a repeated one refused).
const ClientCredentials = {
  client_id: z.string().optional().describe('client_secret_post, or a public client alone'),
  client_secret: z.string().optional().describe('client_secret_post'),
};
const TokenForm = z.object({
  token: z.string().min(1).describe('the token (only its first 8192 characters are read)'),
  token_type_hint: z
    .string()
    .optional()
    .describe('access_token or refresh_token: which kind to look for first; any other value is ignored'),
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

/** Reads one field of a form of these endpoints by name. */
type FieldReader<Shape extends z.core.$ZodShape> = <K extends keyof Shape & string>(
  name: K,
) => z.core.output<Shape[K]>;

/** A form of these endpoints, read with its schema: a field it refuses is an invalid_request. */
function formOf<Shape extends z.core.$ZodShape>(
  schema: z.core.$ZodObject<Shape>,
  body: FormBody | undefined,
): FieldReader<Shape> {
  const form = new FormReader(schema, body ?? {}, { blankIsAbsent: true });
  return (name) => {
    const field = form.field(name);
    if (!field.ok) throw new OAuthProtocolError('invalid_request', field.description);
    return field.value;
  };
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
    request.method === 'POST' && isFormRequest(request)
      ? formOf(UserinfoForm, request.body)('access_token')
      : undefined;
  if (match !== null && fromBody !== undefined)
    throw new OAuthProtocolError('invalid_request', 'send the access token in one place only');
  return match?.[1] ?? fromBody;
}

/** `GET/POST /oauth/userinfo`, `POST /oauth/revoke` (RFC 7009), `POST /oauth/introspect` (RFC 7662). */
export async function resourceRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  const { core } = idgate;
  const client = (request: FastifyRequest, field: FieldReader<typeof TokenForm.shape>) =>
    core.authenticateClient({
      authorization: request.headers.authorization,
      clientId: field('client_id'),
      clientSecret: field('client_secret'),
    });
  const options = {
    config: { errorFormat: 'oauth' as const },
    onRequest: async (_request: FastifyRequest, reply: import('fastify').FastifyReply) => {
      reply.header('cache-control', 'no-store');
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
    const field = formOf(TokenForm, request.body);
    const { client: caller } = await client(request, field);
    await core.revoke(field('token').slice(0, 8192), field('token_type_hint'), caller, callerOf(request));
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
    const field = formOf(TokenForm, request.body);
    const { method } = await client(request, field);
    // RFC 7662 §2.1: the caller must be authorized; a public client proves nothing.
    if (method === 'none') {
      throw new OAuthProtocolError('invalid_client', 'introspection needs client authentication', {
        status: 401,
        headers: { 'WWW-Authenticate': 'Basic realm="idgate", charset="UTF-8"' },
      });
    }
    return core.introspect(field('token').slice(0, 8192), field('token_type_hint'));
  });

  installPreflight(app, ['/oauth/userinfo', '/oauth/revoke', '/oauth/token']);
}
