import { handleTokenRequest } from '@idgate/core';
import { TokenResponse } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { credentialEndpoint } from '../../http/credential-endpoint.js';
import { tokenEndpointContext } from './token-context.js';

/** `POST /oauth/token` (RFC 6749 §3.2). */
export async function tokenRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  credentialEndpoint(
    app,
    '/oauth/token',
    'the token endpoint',
    TokenResponse,
    (form, authorization, request) =>
      handleTokenRequest(form, authorization, tokenEndpointContext(idgate, request)),
  );
}
