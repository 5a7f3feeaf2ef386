import { handleTokenRequest, IdgateError, LoginThrottle } from '@idgate/core';
import { TokenResponse } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { allowAnyOrigin } from '../../http/cors.js';
import type { FormBody } from '../../http/form.js';
import type { Services } from '../../services.js';

/** `POST /oauth/token` (RFC 6749 §3.2). */
export async function tokenRoutes(app: FastifyInstance, { services }: { services: Services }): Promise<void> {
  const throttle = new LoginThrottle(
    services.storage.loginAttempts,
    services.config.bruteForce,
    services.clock,
  );
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
      if (!request.headers['content-type']?.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
        throw new IdgateError(
          'invalid_request',
          'the token endpoint takes application/x-www-form-urlencoded',
        );
      }
      const { tokens } = services.config;
      return handleTokenRequest(request.body ?? {}, request.headers.authorization, {
        issuer: services.config.issuer,
        keys: services.keys(),
        clock: services.clock,
        findClient: (id) => services.storage.clients.findById(id),
        passwords: {
          findUserByUsername: (username) => services.storage.users.findByUsername(username),
          hasher: services.hasher,
          dummyHash: services.dummyHash,
        },
        storage: services.storage,
        lifetimes: {
          idToken: tokens.idTokenTtl,
          grant: tokens.grantTtl,
          maxAccessToken: services.keyPolicy.maxTokenLifetimeSeconds,
        },
        refreshForTrustedClients: tokens.refreshForTrustedClients,
        throttle,
        sourceAddress: request.ip,
      });
    },
  );
}
