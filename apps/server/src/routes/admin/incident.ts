import { liftAddressBlocks, listBlockedAddresses, listNotBefore, setNotBefore } from '@idgate/core/admin';
import { BlockedAddress, LiftedBlocks, NotBefore, SetNotBeforeInput } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { adminScope } from './scope.js';

/**
 * The admin REST API of incident response besides signing keys: not-befores (revoke everything
 * of a scope issued before an instant, `/admin/v1/not-before`) and the source addresses sign-ins
 * are refused from (`/admin/v1/blocked-addresses`). Errors are RFC 9457 problems.
 */
export async function adminNotBeforeRoutes(app: FastifyInstance): Promise<void> {
  const { route } = adminScope(app, 'not_before');

  app.get(
    '/admin/v1/not-before',
    route(
      {
        operationId: 'listNotBefore',
        scope: 'sessions:read',
        summary: 'List the not-befores in force',
        description: 'Global first, then per client, then per user; a short list, answered as one page.',
        tags: ['incident-response'],
        responses: {
          200: {
            description: 'every not-before',
            json: z.object({ items: z.array(NotBefore), nextCursor: z.null() }),
          },
        },
      },
      async (_input, request) => ({ items: await listNotBefore(request.admin), nextCursor: null }),
    ),
  );

  app.post(
    '/admin/v1/not-before',
    route(
      {
        operationId: 'setNotBefore',
        scope: 'sessions:revoke-all',
        summary: 'Revoke everything issued before an instant',
        description:
          "Keycloak's not-before, globally, per client or per user: access tokens and ID tokens (as `id_token_hint`) issued before it — in the same second counts as before — and grants (their refresh tokens), browser sessions and authorization codes made before it are refused everywhere: TokenReview answers `authenticated: false`, introspection `active: false`, refresh `invalid_grant`, on every replica within a second. `before` defaults to now; one more than a minute ahead is refused, one ahead within it counts as now. A later not-before set before stays.",
        tags: ['incident-response'],
        body: { json: SetNotBeforeInput },
        responses: {
          200: { description: 'the not-before in force now', json: NotBefore },
          400: { description: 'a bad scope, subject or instant', problem: ['invalid_not_before'] },
          404: { description: 'no such client or user', problem: ['client_not_found', 'user_not_found'] },
        },
      },
      { json: 'a not-before' },
      (_input, request) => setNotBefore(request.admin, request.body),
    ),
  );
}

/** Blocked source addresses: list them, lift one or all. */
export async function adminBlockedAddressRoutes(app: FastifyInstance): Promise<void> {
  const { route } = adminScope(app, 'address');
  const BASE = '/admin/v1/blocked-addresses';

  app.get(
    BASE,
    route(
      {
        operationId: 'listBlockedAddresses',
        scope: 'users:read',
        summary: 'List blocked source addresses',
        description:
          'Addresses sign-ins are refused from now (`bruteForce.maxFailuresPerAddress` failures within `bruteForce.window`), the browser pages and the password grant apart, most failures first; at most 500, answered as one page.',
        tags: ['incident-response'],
        responses: {
          200: {
            description: 'the blocked addresses',
            json: z.object({ items: z.array(BlockedAddress), nextCursor: z.null() }),
          },
        },
      },
      async (_input, request) => ({ items: await listBlockedAddresses(request.admin), nextCursor: null }),
    ),
  );

  app.delete(
    `${BASE}/:address`,
    route(
      {
        operationId: 'liftAddressBlock',
        scope: 'users:unlock',
        summary: 'Lift the block of a source address',
        description:
          'Sign-ins from the address are counted afresh at once on every replica; the failures before stay on record. Accounts stay locked (unlock them apart).',
        tags: ['incident-response'],
        params: z.object({ address: z.string().describe('an IPv4 or IPv6 address') }),
        responses: {
          200: { description: 'whether it was blocked', json: LiftedBlocks },
          400: { description: 'not an IP address', problem: ['invalid_address'] },
        },
      },
      ({ params }, request) => liftAddressBlocks(request.admin, params.address),
    ),
  );

  app.delete(
    BASE,
    route(
      {
        operationId: 'liftAddressBlocks',
        scope: 'users:unlock',
        summary: 'Lift the block of every source address',
        description:
          'Every address is counted afresh, and so are the wrong device user codes of all addresses together; answers the addresses that were blocked.',
        tags: ['incident-response'],
        responses: { 200: { description: 'the addresses that were blocked', json: LiftedBlocks } },
      },
      (_input, request) => liftAddressBlocks(request.admin, undefined),
    ),
  );
}
