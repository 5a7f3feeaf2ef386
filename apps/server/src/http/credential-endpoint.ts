import { OAuthProtocolError } from '@idgate/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { allowAnyOrigin } from './cors.js';
import { type FormBody, isFormRequest } from './form.js';

/**
 * A form-encoded OAuth endpoint that answers credentials (the token endpoint, RFC 6749 §3.2; the
 * device authorization endpoint, RFC 8628 §3.1): OAuth JSON errors, any origin, never cached
 * (RFC 6749 §5.1), the body refused unless it is a form, and the answer serialized by `response`.
 * @example credentialEndpoint(app, '/oauth/token', 'the token endpoint', TokenResponse, (form, authorization, request) => …);
 */
export function credentialEndpoint(
  app: FastifyInstance,
  path: string,
  name: string,
  response: z.ZodType,
  handle: (form: FormBody, authorization: string | undefined, request: FastifyRequest) => Promise<unknown>,
): void {
  app.post<{ Body: FormBody | undefined }>(
    path,
    {
      config: { errorFormat: 'oauth' },
      schema: { response: { 200: z.toJSONSchema(response, { target: 'draft-7' }) } },
      onRequest: async (_request, reply) => {
        reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
        allowAnyOrigin(reply);
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
