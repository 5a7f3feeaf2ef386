import { type ApiKeyRecord, apiKeyFromAuthorization, authenticateApiKey } from '@idgate/core';
import type { ApiKeyScope } from '@idgate/schema';
import type { FastifyRequest } from 'fastify';
import { apiKeyLookupFor, directoryOf } from '../cache/directory.js';
import type { Services } from '../services.js';

// Refreshing last-used on every request would turn each one into a write.
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Authenticates the API key of a request (`Authorization: Bearer <key>` or a bare key) for
 * `scope` — from memory in a running server — and records its use at most once a minute.
 * @throws ApiKeyError (401 missing/invalid, 403 scope), which the error handler answers.
 */
export function apiKeyAuthenticator(
  services: Services,
  scope: ApiKeyScope,
): (request: FastifyRequest) => Promise<ApiKeyRecord> {
  const lastTouched = new Map<string, number>();
  const findApiKey = apiKeyLookupFor(services);
  return async (request) => {
    const presented = apiKeyFromAuthorization(request.headers.authorization);
    const directory = directoryOf(services);
    const key = directory
      ? await directory.authenticateApiKey(presented, scope)
      : await authenticateApiKey(presented, scope, findApiKey);
    const now = services.clock.now();
    if (now - (lastTouched.get(key.id) ?? 0) >= TOUCH_INTERVAL_MS) {
      lastTouched.set(key.id, now);
      services.storage.apiKeys
        .touch(key.id, new Date(now))
        .catch((err: unknown) => request.log.warn({ err }, 'could not record API key use'));
    }
    return key;
  };
}
