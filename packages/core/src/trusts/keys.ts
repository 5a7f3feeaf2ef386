import type { JWK } from 'jose';
import type { TrustRecord } from '../model.js';
import type { Clock } from '../ports/runtime.js';

/** A trust's verification keys, or why there are none to use. */
export type TrustKeys =
  | { ok: true; keys: JWK[]; source: 'inline' | 'fetched' | 'cached' }
  | { ok: false; reason: 'jwks_unreachable'; detail: string };

/** Where the keys of trusts whose JWKS is not inline come from: discovery, then `jwks_uri`. */
export interface TrustKeySource {
  /**
   * The keys of `trust`: inline ones as they are; else the cached set while fresh (`ttlMs`), else
   * fetched anew. `refresh` fetches anew even a fresh set (a `kid` it does not hold), at most once
   * per `minRefreshMs`. A fetch that fails answers the last set fetched, however old: only an
   * issuer never reached has no keys.
   */
  keysFor(trust: TrustRecord, options?: { refresh?: boolean }): Promise<TrustKeys>;
}

const MAX_DOCUMENT_BYTES = 256 * 1024;

interface Cached {
  keys: JWK[];
  fetchedAt: number;
}

/**
 * A {@link TrustKeySource} over `fetch`: discovery (`discoveryUrl`, or
 * `{issuer}/.well-known/openid-configuration`, whose `issuer` must be the trust's), then its
 * `jwks_uri`; each answer at most 256 KiB, each request given up after `timeoutMs`.
 * @example const keys = createTrustKeySource({ fetch: globalThis.fetch, clock: systemClock });
 */
export function createTrustKeySource(options: {
  fetch: typeof globalThis.fetch;
  clock: Clock;
  ttlMs?: number;
  minRefreshMs?: number;
  timeoutMs?: number;
}): TrustKeySource {
  const ttlMs = options.ttlMs ?? 300_000;
  const minRefreshMs = options.minRefreshMs ?? 30_000;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const cache = new Map<string, Cached>();
  const pending = new Map<string, Promise<JWK[]>>();

  const getJson = async (url: string): Promise<Record<string, unknown>> => {
    const response = await options.fetch(url, {
      headers: { accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) throw new Error(`${url} answered ${response.status}`);
    const text = await response.text();
    if (text.length > MAX_DOCUMENT_BYTES) throw new Error(`${url} answered more than 256 KiB`);
    const body: unknown = JSON.parse(text);
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new Error(`${url} did not answer a JSON object`);
    return body as Record<string, unknown>;
  };

  const fetchKeys = async (trust: TrustRecord): Promise<JWK[]> => {
    const discoveryUrl =
      trust.discoveryUrl ?? `${trust.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const discovery = await getJson(discoveryUrl);
    if (discovery.issuer !== trust.issuer)
      throw new Error(`discovery at ${discoveryUrl} names another issuer`);
    const jwksUri = discovery.jwks_uri;
    if (typeof jwksUri !== 'string') throw new Error(`discovery at ${discoveryUrl} has no jwks_uri`);
    const jwks = await getJson(jwksUri);
    if (!Array.isArray(jwks.keys)) throw new Error(`${jwksUri} is not a JWK set`);
    return (jwks.keys as unknown[]).filter(
      (key): key is JWK => typeof key === 'object' && key !== null && typeof (key as JWK).kty === 'string',
    );
  };

  return {
    async keysFor(trust, { refresh = false } = {}) {
      if (trust.jwks !== null) return { ok: true, keys: trust.jwks.keys as JWK[], source: 'inline' };
      const key = `${trust.issuer} ${trust.discoveryUrl ?? ''}`;
      const now = options.clock.now();
      const held = cache.get(key);
      const fresh = held !== undefined && now - held.fetchedAt < ttlMs;
      const mayRefresh = held === undefined || now - held.fetchedAt >= minRefreshMs;
      if (held !== undefined && fresh && !(refresh && mayRefresh))
        return { ok: true, keys: held.keys, source: 'cached' };
      if (held !== undefined && refresh && !mayRefresh)
        return { ok: true, keys: held.keys, source: 'cached' };
      let inFlight = pending.get(key);
      if (inFlight === undefined) {
        inFlight = fetchKeys(trust).finally(() => pending.delete(key));
        pending.set(key, inFlight);
      }
      try {
        const keys = await inFlight;
        cache.set(key, { keys, fetchedAt: options.clock.now() });
        return { ok: true, keys, source: 'fetched' };
      } catch (error) {
        if (held !== undefined) return { ok: true, keys: held.keys, source: 'cached' };
        const detail = error instanceof Error ? error.message : String(error);
        return { ok: false, reason: 'jwks_unreachable', detail };
      }
    },
  };
}
