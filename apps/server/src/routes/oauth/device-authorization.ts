import { OAuthProtocolError, startDeviceAuthorization } from '@idgate/core';
import { DeviceAuthorizationResponse } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { allowAnyOrigin } from '../../http/cors.js';
import { type FormBody, isFormRequest } from '../../http/form.js';

/** `POST /oauth/device_authorization` (RFC 8628 §3.1): a device asks for a device code and a user code. */
export async function deviceAuthorizationRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  const verificationUri = `${idgate.config.issuer}/device`;
  app.post<{ Body: FormBody | undefined }>(
    '/oauth/device_authorization',
    {
      config: { errorFormat: 'oauth' },
      schema: { response: { 200: z.toJSONSchema(DeviceAuthorizationResponse, { target: 'draft-7' }) } },
      onRequest: async (_request, reply) => {
        // RFC 8628 §3.2 answers as RFC 6749 §5.1 does: the device code is a credential, never cached.
        reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
        allowAnyOrigin(reply);
      },
    },
    async (request) => {
      if (!isFormRequest(request)) {
        throw new OAuthProtocolError(
          'invalid_request',
          'the device authorization endpoint takes application/x-www-form-urlencoded',
        );
      }
      return startDeviceAuthorization(request.body ?? {}, request.headers.authorization, {
        clock: idgate.clock,
        findClient: (id) => idgate.storage.clients.findById(id),
        storage: idgate.storage,
        verificationUri,
        lifetimeSeconds: idgate.config.device.codeTtl,
        intervalSeconds: idgate.config.device.interval,
      });
    },
  );
}
