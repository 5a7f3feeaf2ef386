import { listSigningKeys, rotateSigningKeys } from '@idgate/core/admin';
import { SigningKeyInfo, SigningKeyRotation } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { adminScope } from './scope.js';

const BASE = '/admin/v1/signing-keys';
const TAGS = ['signing-keys'];

/**
 * The admin REST API of token signing keys, under `/admin/v1/signing-keys`: list them with their
 * state (never private material) and rotate. Each route needs an API key holding the scope it declares.
 */
export async function adminSigningKeyRoutes(app: FastifyInstance): Promise<void> {
  const { route } = adminScope(app, 'signing_key');

  app.get(
    BASE,
    route(
      {
        operationId: 'listSigningKeys',
        scope: 'keys:read',
        summary: 'List signing keys',
        description: 'Newest first, with their state now; a handful at most, answered as one page.',
        tags: TAGS,
        responses: {
          200: {
            description: 'every signing key',
            json: z.object({ items: z.array(SigningKeyInfo), nextCursor: z.null() }),
          },
        },
      },
      async (_input, request) => ({ items: await listSigningKeys(request.admin), nextCursor: null }),
    ),
  );

  app.post(
    `${BASE}/rotate`,
    route(
      {
        operationId: 'rotateSigningKeys',
        scope: 'keys:rotate',
        summary: 'Rotate the signing keys',
        description:
          'A new key is published at once and signs after the activation delay; the keys it replaces stay published until their last token has expired.',
        tags: TAGS,
        responses: { 200: { description: 'the new key and the retired kids', json: SigningKeyRotation } },
      },
      async (_input, request) => {
        const rotation = await rotateSigningKeys(request.admin);
        // This server publishes the new key before it answers; others follow the change feed.
        await app.idgate.reloadKeys();
        return rotation;
      },
    ),
  );
}
