import {
  authenticateClient,
  introspectToken,
  type LiveTokenContext,
  OAuthProtocolError,
  revokeToken,
  userinfo,
} from '@idgate/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { allowAnyOrigin, installPreflight } from '../../http/cors.js';
import { type FormBody, isFormRequest } from '../../http/form.js';

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
  const live = (): LiveTokenContext => idgate.directory.liveTokenContext();
  const client = (request: FastifyRequest<{ Body: FormBody | undefined }>) =>
    authenticateClient(
      {
        authorization: request.headers.authorization,
        clientId: formField(request.body, 'client_id'),
        clientSecret: formField(request.body, 'client_secret'),
      },
      (id) => idgate.storage.clients.findById(id),
      new Date(idgate.clock.now()),
    );
  const options = {
    config: { errorFormat: 'oauth' as const },
    onRequest: async (_request: FastifyRequest, reply: import('fastify').FastifyReply) => {
      reply.header('Cache-Control', 'no-store');
      allowAnyOrigin(reply);
    },
  };

  const handleUserinfo = async (request: FastifyRequest<{ Body: FormBody | undefined }>) =>
    userinfo(bearerToken(request), live());
  app.get<{ Body: FormBody | undefined }>('/oauth/userinfo', options, handleUserinfo);
  app.post<{ Body: FormBody | undefined }>('/oauth/userinfo', options, handleUserinfo);

  app.post<{ Body: FormBody | undefined }>('/oauth/revoke', options, async (request, reply) => {
    requireForm(request);
    const { client: caller } = await client(request);
    const token = formField(request.body, 'token');
    if (token === undefined) throw new OAuthProtocolError('invalid_request', 'token is required');
    await revokeToken(token.slice(0, 8192), formField(request.body, 'token_type_hint'), caller, {
      issuer: idgate.config.issuer,
      keys: idgate.keys(),
      clock: idgate.clock,
      storage: idgate.storage,
      maxTokenLifetimeSeconds: idgate.maxTokenLifetimeSeconds,
    });
    return reply.status(200).send();
  });

  app.post<{ Body: FormBody | undefined }>('/oauth/introspect', options, async (request) => {
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
    return introspectToken(token.slice(0, 8192), formField(request.body, 'token_type_hint'), {
      ...live(),
      storage: idgate.storage,
    });
  });

  installPreflight(app, ['/oauth/userinfo', '/oauth/revoke', '/oauth/token']);
}
