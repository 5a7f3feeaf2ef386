import { type ApiKeyRecord, apiKeyFromAuthorization, StorageUnavailableError } from '@idgate/core';
import type { ApiKeyScope } from '@idgate/schema';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { requestOrigin } from './caller.js';

// Refreshing last-used on every request would turn each one into a write.
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Authenticates the API key of a request (`Authorization: Bearer <key>` or a bare key) for the
 * scope its route needs — core's check, over the directory's memory — and records its use at most
 * once a minute. A live key that lacks the scope is audited (`api-key.denied`) before the 403.
 * @throws ApiKeyError (401 missing/invalid, 403 naming the scope the key lacks) — as a rejected
 * promise — which the error handler answers.
 * @example const authenticate = apiKeyAuthenticator(app.idgate); request.reviewerKey = await authenticate(request, 'tokenreview');
 */
export function apiKeyAuthenticator(
  context: AppContext,
): (request: FastifyRequest, scope: ApiKeyScope) => Promise<ApiKeyRecord> {
  const { core, clock, storage } = context;
  const lastTouched = new Map<string, number>();
  const used = (request: FastifyRequest, key: ApiKeyRecord): ApiKeyRecord => {
    const now = clock.now();
    if (now - (lastTouched.get(key.id) ?? 0) >= TOUCH_INTERVAL_MS) {
      lastTouched.set(key.id, now);
      storage.apiKeys
        .touch(key.id, new Date(now))
        // While the database is away the outage is logged once (StorageHealth), not per key.
        .catch((err: unknown) =>
          request.log[err instanceof StorageUnavailableError ? 'debug' : 'warn'](
            { err },
            'could not record API key use',
          ),
        );
    }
    return key;
  };
  return async (request, scope) => {
    const presented = apiKeyFromAuthorization(request.headers.authorization);
    // A live key refused for want of the scope is recorded (api-key.denied) with the route it asked
    // for; told only then, not on every TokenReview.
    const denied = () => ({
      ...requestOrigin(request),
      operation: `${request.method} ${request.routeOptions.url}`,
    });
    return used(request, await core.authenticateApiKey(presented, scope, denied));
  };
}
