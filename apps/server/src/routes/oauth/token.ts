import { TokenRequest, TokenResponse } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../../http/caller.js';
import { credentialEndpoint } from '../../http/credential-endpoint.js';

/** `POST /oauth/token` (RFC 6749 §3.2). */
export async function tokenRoutes(app: FastifyInstance): Promise<void> {
  const { core } = app.idgate;
  credentialEndpoint(
    app,
    '/oauth/token',
    'the token endpoint',
    TokenResponse,
    {
      operationId: 'requestToken',
      summary: 'Token endpoint (RFC 6749 §3.2)',
      description:
        'Grants: authorization_code (with PKCE, RFC 7636), refresh_token, client_credentials, password (trusted clients only) and urn:ietf:params:oauth:grant-type:device_code (RFC 8628 §3.4). A confidential client authenticates with client_secret_basic or client_secret_post; a public client sends its client_id alone. `resource` (RFC 8707) names the audience of the access token and may repeat.',
      tags: ['oauth'],
      body: { form: TokenRequest },
      responses: {
        200: { description: 'the tokens (RFC 6749 §5.1, OIDC Core §3.1.3.3)' },
        400: {
          description:
            'the request was refused (RFC 6749 §5.2); the device grant answers its polling states here (RFC 8628 §3.5)',
          oauthError: [
            'invalid_request',
            'invalid_grant',
            'unauthorized_client',
            'unsupported_grant_type',
            'invalid_scope',
            'invalid_target',
            'authorization_pending',
            'slow_down',
            'expired_token',
            'access_denied',
          ],
        },
        429: {
          description: 'password grant: too many failed sign-ins, the account is locked for now',
          oauthError: ['invalid_grant'],
          headers: { 'Retry-After': 'seconds until the account may sign in again' },
        },
      },
    },
    (form, authorization, request) => core.token(form, authorization, callerOf(request)),
  );
}
