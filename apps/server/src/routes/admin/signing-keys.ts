import { listSigningKeys, retireSigningKey, rotateSigningKeys } from '@idgate/core/admin';
import {
  RetireSigningKeyInput,
  SigningKeyInfo,
  SigningKeyRetirement,
  SigningKeyRotation,
} from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { adminScope } from './scope.js';

const BASE = '/admin/v1/signing-keys';
const TAGS = ['signing-keys'];

/**
 * The admin REST API of token signing keys, under `/admin/v1/signing-keys`: list them with their
 * state (never private material), rotate, and retire one at once (incident response). Each route needs an API key holding the scope it declares.
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
  app.post(
    `${BASE}/:kid/retire`,
    route(
      {
        operationId: 'retireSigningKey',
        scope: 'keys:retire',
        summary: 'Retire a signing key at once',
        description:
          'Incident response, not rotation: the key leaves JWKS now and every token it signed stops verifying — token review, introspection, userinfo and `id_token_hint` — on every replica within a second. The only key that may sign is retired only with `rotate: true`, which makes a new key in the same step (it signs at once).',
        tags: TAGS,
        params: z.object({ kid: z.string().describe('the key id (`kid`)') }),
        body: { json: RetireSigningKeyInput, required: false },
        responses: {
          200: {
            description: 'the retired key, and the key made in the same step',
            json: SigningKeyRetirement,
          },
          400: { description: 'a malformed kid or body', problem: ['invalid_signing_key'] },
          404: { description: 'no such key in JWKS', problem: ['signing_key_not_found'] },
          409: { description: 'the only key that may sign, without rotate', problem: ['last_signing_key'] },
        },
      },
      { json: 'a retirement' },
      async ({ params, body }, request) => {
        const retirement = await retireSigningKey(request.admin, params.kid, {
          rotate: body?.rotate === true,
        });
        // This server stops verifying with the key before it answers; others follow the change feed.
        await app.idgate.reloadKeys();
        return retirement;
      },
    ),
  );
}
