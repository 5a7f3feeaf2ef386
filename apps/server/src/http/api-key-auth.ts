import { type ApiKeyRecord, apiKeyFromAuthorization, authenticateApiKey } from '@idgate/core';
import type { ApiKeyScope } from '@idgate/schema';
import type { FastifyRequest } from 'fastify';
import { apiKeyLookupFor, directoryOf } from '../cache/directory.js';
import type { Services } from '../services.js';

// Refreshing last-used on every request would turn each one into a write.
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Authenticates the API key of a request (`Authorization: Bearer <key>` or a bare key) for
 * `scope` — from memory in a running server — and records its use at most once a minute. A key
 * the running server's directory already knows is answered at once (no promise on the hot path);
 * any other goes through the full check, as a promise.
 * @throws ApiKeyError (401 missing/invalid, 403 scope) — as a rejected promise — which the error
 * handler answers.
 */
export function apiKeyAuthenticator(
  services: Services,
  scope: ApiKeyScope,
): (request: FastifyRequest) => ApiKeyRecord | Promise<ApiKeyRecord> {
  const lastTouched = new Map<string, number>();
  const findApiKey = apiKeyLookupFor(services);
  const used = (request: FastifyRequest, key: ApiKeyRecord): ApiKeyRecord => {
    const now = services.clock.now();
    if (now - (lastTouched.get(key.id) ?? 0) >= TOUCH_INTERVAL_MS) {
      lastTouched.set(key.id, now);
      services.storage.apiKeys
        .touch(key.id, new Date(now))
        .catch((err: unknown) => request.log.warn({ err }, 'could not record API key use'));
    }
    return key;
  };
  return (request) => {
    const presented = apiKeyFromAuthorization(request.headers.authorization);
    const directory = directoryOf(services);
    const known = directory?.knownApiKey(presented, scope);
    if (known !== undefined) return used(request, known);
    const checked = directory
      ? directory.authenticateApiKey(presented, scope)
      : authenticateApiKey(presented, scope, findApiKey);
    return checked.then((key) => used(request, key));
  };
}
