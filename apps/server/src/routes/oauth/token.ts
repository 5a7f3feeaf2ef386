import { handleTokenRequest, OAuthProtocolError } from '@idgate/core';
import { TokenResponse } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { allowAnyOrigin } from '../../http/cors.js';
import { type FormBody, isFormRequest } from '../../http/form.js';
import { tokenEndpointContext } from './token-context.js';

/** `POST /oauth/token` (RFC 6749 §3.2). */
export async function tokenRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  app.post<{ Body: FormBody | undefined }>(
    '/oauth/token',
    {
      config: { errorFormat: 'oauth' },
      schema: { response: { 200: z.toJSONSchema(TokenResponse, { target: 'draft-7' }) } },
      onRequest: async (_request, reply) => {
        // RFC 6749 §5.1: token responses, good or bad, are never cached.
        reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
        allowAnyOrigin(reply);
      },
    },
    async (request) => {
      if (!isFormRequest(request)) {
        throw new OAuthProtocolError(
          'invalid_request',
          'the token endpoint takes application/x-www-form-urlencoded',
        );
      }
      return handleTokenRequest(
        request.body ?? {},
        request.headers.authorization,
        tokenEndpointContext(idgate, request),
      );
    },
  );
}
