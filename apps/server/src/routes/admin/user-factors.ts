import { listUserFactors, removeUserFactor, resetUserFactors, setMfaRequired } from '@idgate/core/admin';
import { FactorsReset, MfaRequirement, UserFactors } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { adminScope } from './scope.js';
import { UserParams } from './users.js';

const BASE = '/admin/v1/users/:username/factors';
const TAGS = ['users'];
const NO_USER = { description: 'no such user', problem: ['user_not_found' as const] };

const FactorParams = UserParams.extend({
  id: z.string().max(64).describe("the factor's id, as listed"),
});

/**
 * A user's second factors, under `/admin/v1/users/{username}/factors`: list them (never a
 * secret), remove one, reset all (factors and recovery codes: the way back for someone who lost
 * every factor), and require a second factor of the user.
 */
export async function adminUserFactorRoutes(app: FastifyInstance): Promise<void> {
  const { route } = adminScope(app, 'factor');

  app.get(
    BASE,
    route(
      {
        operationId: 'listUserFactors',
        scope: 'users:read',
        summary: "A user's second factors",
        description:
          'The enrolled factors (kind, name, when enrolled and last used; never a secret), the unused recovery codes left, and whether a second factor is required.',
        tags: TAGS,
        params: UserParams,
        responses: { 200: { description: 'the factors', json: UserFactors }, 404: NO_USER },
      },
      ({ params }, request) => listUserFactors(request.admin, params.username),
    ),
  );

  app.delete(
    `${BASE}/:id`,
    route(
      {
        operationId: 'removeUserFactor',
        scope: 'users:write',
        summary: "Remove one of a user's second factors",
        tags: TAGS,
        params: FactorParams,
        responses: {
          204: { description: 'removed' },
          404: {
            description: 'no such user, or no such factor of it',
            problem: ['user_not_found', 'factor_not_found'],
          },
        },
      },
      async ({ params }, request, reply) => {
        await removeUserFactor(request.admin, params.username, params.id);
        return reply.status(204).send();
      },
    ),
  );

  app.delete(
    BASE,
    route(
      {
        operationId: 'resetUserFactors',
        scope: 'users:write',
        summary: 'Remove every second factor and recovery code of a user',
        description:
          'For someone who lost every factor, once they proved who they are another way. Their next sign-in is with the password alone, or enrols a factor first when one is required.',
        tags: TAGS,
        params: UserParams,
        responses: {
          200: { description: 'how many factors were removed', json: FactorsReset },
          404: NO_USER,
        },
      },
      ({ params }, request) => resetUserFactors(request.admin, params.username),
    ),
  );

  app.put(
    `${BASE}/requirement`,
    route(
      {
        operationId: 'setMfaRequirement',
        scope: 'users:write',
        summary: 'Require (or stop requiring) a second factor of a user',
        description:
          'With one required, the next sign-in asks for the second factor, or enrols one first; the password grant refuses the user.',
        tags: TAGS,
        params: UserParams,
        body: { json: MfaRequirement, required: true },
        responses: {
          200: { description: 'the factors and the requirement', json: UserFactors },
          400: { description: 'a bad field', problem: ['invalid_request'] },
          404: NO_USER,
        },
      },
      { json: 'an MFA requirement' },
      ({ params, body }, request) => setMfaRequired(request.admin, params.username, body.required),
    ),
  );
}
