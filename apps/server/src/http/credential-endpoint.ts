import { OAuthProtocolError } from '@idgate/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { type ResponseDoc, type RouteDoc, routeSchema } from '../openapi/route-doc.js';
import { allowAnyOrigin } from './cors.js';
import { type FormBody, isFormRequest } from './form.js';

/** Answers every credential endpoint shares: no-store, and client authentication's refusal. */
const CREDENTIAL_HEADERS = {
  'Cache-Control': 'no-store (RFC 6749 §5.1)',
  Pragma: 'no-cache',
  'Access-Control-Allow-Origin': '*',
};
const INVALID_CLIENT: ResponseDoc = {
  description: 'client authentication failed (RFC 6749 §5.2)',
  oauthError: ['invalid_client'],
  headers: { 'WWW-Authenticate': 'the Basic challenge, when the client tried client_secret_basic' },
};
const TEMPORARILY_UNAVAILABLE: ResponseDoc = {
  description: 'the database cannot answer now',
  oauthError: ['temporarily_unavailable'],
  headers: { 'Retry-After': 'seconds to wait before trying again' },
};

/**
 * A form-encoded OAuth endpoint that answers credentials (the token endpoint, RFC 6749 §3.2; the
 * device authorization endpoint, RFC 8628 §3.1): OAuth JSON errors, any origin, never cached
 * (RFC 6749 §5.1), the body refused unless it is a form, and the answer serialized by `response`.
 * `doc` describes the route (the generic answers of a credential endpoint are added to it: 401
 * `invalid_client`, 503, the no-store headers of the 200).
 * @example credentialEndpoint(app, '/oauth/token', 'the token endpoint', TokenResponse, doc, (form, authorization, request) => …);
 */
export function credentialEndpoint(
  app: FastifyInstance,
  path: string,
  name: string,
  response: z.core.$ZodType,
  doc: RouteDoc,
  handle: (form: FormBody, authorization: string | undefined, request: FastifyRequest) => Promise<unknown>,
): void {
  const endpointDoc: RouteDoc = {
    security: ['clientSecretBasic', 'clientSecretPost', 'anonymous'],
    ...doc,
    responses: {
      ...doc.responses,
      200: { json: response, ...doc.responses[200], headers: CREDENTIAL_HEADERS } as ResponseDoc,
      401: INVALID_CLIENT,
      503: TEMPORARILY_UNAVAILABLE,
    },
  };
  app.post<{ Body: FormBody | undefined }>(
    path,
    {
      config: { errorFormat: 'oauth', doc: endpointDoc },
      schema: routeSchema(endpointDoc),
      // A callback hook, not an async one: no promise per request (with the other hooks: 18k fewer instructions per discovery, 12 %; bench/README.md).
      onRequest: (_request, reply, done) => {
        reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
        allowAnyOrigin(reply);
        done();
      },
    },
    async (request) => {
      if (!isFormRequest(request)) {
        throw new OAuthProtocolError('invalid_request', `${name} takes application/x-www-form-urlencoded`);
      }
      return handle(request.body ?? {}, request.headers.authorization, request);
    },
  );
}
