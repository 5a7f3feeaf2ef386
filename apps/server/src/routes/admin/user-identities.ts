import { linkedIdentityView, linkIdentity, unlinkIdentity } from '@idgate/core/admin';
import { LinkedIdentity, LinkIdentityRequest } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { adminScope } from './scope.js';
import { UserParams } from './users.js';

const BASE = '/admin/v1/users/:username/identities';
const TAGS = ['users'];

const IdentityParams = UserParams.extend({ provider: z.string(), subject: z.string() });

/**
 * Linking and unlinking the external identities of a local user, under
 * `/admin/v1/users/{username}/identities` (listing them is with the identity provider routes).
 * Linking is what `manual` mapping needs; unlinking stops that identity from signing in as the user.
 */
export async function adminUserIdentityRoutes(app: FastifyInstance): Promise<void> {
  const { route, root } = adminScope(app, 'identity');

  app.post(
    BASE,
    route(
      {
        operationId: 'linkIdentity',
        scope: 'users:write',
        summary: 'Link an external identity to a user',
        tags: TAGS,
        params: UserParams,
        body: { json: LinkIdentityRequest, required: true },
        responses: {
          201: { description: 'the linked identity', json: LinkedIdentity, headers: { Location: 'its URL' } },
          400: { description: 'a bad field', problem: ['invalid_identity'] },
          404: {
            description: 'no such user or identity provider',
            problem: ['user_not_found', 'identity_provider_not_found'],
          },
          409: { description: 'the subject is linked already', problem: ['identity_exists'] },
        },
      },
      { json: 'an identity' },
      async ({ params, body }, request, reply) => {
        const { user, identity } = await linkIdentity(request.admin, { ...body, username: params.username });
        const where = [user.username, identity.provider, identity.subject].map(encodeURIComponent);
        return reply
          .status(201)
          .header('location', `${root}/admin/v1/users/${where[0]}/identities/${where[1]}/${where[2]}`)
          .send(linkedIdentityView(identity));
      },
    ),
  );

  app.delete(
    `${BASE}/:provider/:subject`,
    route(
      {
        operationId: 'unlinkIdentity',
        scope: 'users:write',
        summary: 'Unlink an external identity from a user',
        tags: TAGS,
        params: IdentityParams,
        responses: {
          204: { description: 'unlinked' },
          404: {
            description: 'no such user, or no such identity of it',
            problem: ['user_not_found', 'identity_not_found'],
          },
        },
      },
      async ({ params }, request, reply) => {
        await unlinkIdentity(request.admin, params);
        return reply.status(204).send();
      },
    ),
  );
}
