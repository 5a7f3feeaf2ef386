import { DeviceAuthorizationRequest, DeviceAuthorizationResponse } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { credentialEndpoint } from '../../http/credential-endpoint.js';

/**
 * `POST /oauth/device_authorization` (RFC 8628 §3.1): a device asks for a device code and a user
 * code. The answer is a credential, like a token response (§3.2): never cached.
 */
export async function deviceAuthorizationRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  credentialEndpoint(
    app,
    '/oauth/device_authorization',
    'the device authorization endpoint',
    DeviceAuthorizationResponse,
    {
      operationId: 'startDeviceAuthorization',
      summary: 'Device authorization endpoint (RFC 8628 §3.1)',
      description:
        'A device asks for a device code to poll the token endpoint with, and a user code for the person to enter at verification_uri.',
      tags: ['oauth'],
      body: { form: DeviceAuthorizationRequest },
      responses: {
        200: { description: 'the device code, the user code and where to enter it (RFC 8628 §3.2)' },
        400: {
          description: 'the request was refused (RFC 6749 §5.2)',
          oauthError: ['invalid_request', 'unauthorized_client', 'invalid_scope', 'invalid_target'],
        },
      },
    },
    (form, authorization) => idgate.core.device.start(form, authorization),
  );
}
