import { hash } from 'node:crypto';
import {
  type AccessTokenVerification,
  type ApiKeyRecord,
  authenticateApiKey,
  type ClientRecord,
  type LiveTokenContext,
  type RevocationKind,
  type UserRecord,
  verifyAccessToken,
} from '@idgate/core';
import type { ApiKeyScope } from '@idgate/schema';
import { effectiveUsers } from '../federation/effective-users.js';
import type { Services } from '../services.js';
import type { Change, ChangeFeed } from './change-feed.js';
import { onLocalChange } from './change-log.js';

/** A bounded map that forgets its oldest entries first. */
class Bounded<V> {
  readonly #map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    return this.#map.get(key);
  }
  set(key: string, value: V): void {
    if (this.#map.size >= this.max) {
      const oldest = this.#map.keys().next().value;
      if (oldest !== undefined) this.#map.delete(oldest);
    }
    this.#map.set(key, value);
  }
  delete(key: string): void {
    this.#map.delete(key);
  }
  clear(): void {
    this.#map.clear();
  }
  get size(): number {
    return this.#map.size;
  }
}

// One-shot `crypto.hash` (Node ≥ 20.12): the same digest as `createHash`, without a Hash object.
const tokenKey = (token: string) => hash('sha256', token, 'base64url');

const REVOKED = Promise.resolve(true);
const NOT_REVOKED = Promise.resolve(false);

/**
 * What the hot paths read — users (with their identities' groups), clients, API keys, the
 * revocation set and token verifications — held in memory and kept in step by the change feed,
 * so a token review touches no database. Verified tokens are cached by a hash of the token (never
 * the token itself) until their `exp`; only the signature check is cached, so revocations and
 * disabled users take effect at once.
 */
export class Directory {
  readonly #users = new Bounded<Promise<UserRecord | undefined>>(50_000);
  readonly #clients = new Bounded<Promise<ClientRecord | undefined>>(10_000);
  readonly #apiKeys = new Bounded<Promise<ApiKeyRecord | undefined>>(10_000);
  /** Tokens that verified, until their `exp`. */
  readonly #verified = new Bounded<AccessTokenVerification>(20_000);
  /**
   * Tokens whose signature did not match — the one refusal that costs a signature check (expired
   * tokens and others are refused before it) — in a cache of their own: a flood of forged tokens
   * churns this one and never evicts the verified tokens above.
   */
  readonly #refused = new Bounded<AccessTokenVerification>(2_000);
  /** Authenticated API keys by a hash of the presented key (never the key itself). */
  readonly #presentedKeys = new Bounded<ApiKeyRecord>(1_000);
  /** `kind:value` → expiry (ms). */
  readonly #revoked = new Map<string, number>();
  readonly #users$;
  /** The one live-token context, made on first use. */
  #context: LiveTokenContext | undefined;

  constructor(private readonly services: Services) {
    this.#users$ = effectiveUsers(services);
  }

  /** Loads the revocation set and follows `feed`. */
  async start(feed: ChangeFeed): Promise<void> {
    await this.#loadRevocations();
    feed.subscribe((changes) => void this.#apply(changes));
    onLocalChange(this.services.database, (topic, key) => void this.#apply([{ id: 0, topic, key }]));
    feed.onResync(() => void this.resync());
  }

  async resync(): Promise<void> {
    this.#users.clear();
    this.#clients.clear();
    this.#apiKeys.clear();
    this.#presentedKeys.clear();
    this.#verified.clear();
    this.#refused.clear();
    await this.#loadRevocations().catch(() => undefined);
    await this.services.reloadKeys().catch(() => undefined);
  }

  async #loadRevocations(): Promise<void> {
    const live = await this.services.storage.revocations.listLive(new Date(this.services.clock.now()));
    this.#revoked.clear();
    for (const entry of live) this.#revoked.set(`${entry.kind}:${entry.value}`, entry.expiresAt.getTime());
  }

  async #apply(changes: Change[]): Promise<void> {
    for (const change of changes) {
      switch (change.topic) {
        case 'user':
          this.#users.delete(change.key);
          break;
        case 'client':
          this.#clients.delete(change.key);
          break;
        case 'api_key':
          // Revocations name a key by id or prefix; both are rare, so forget them all.
          this.#apiKeys.clear();
          this.#presentedKeys.clear();
          break;
        case 'revocation':
          this.#revokeFromLog(change.key);
          break;
        case 'signing_key':
          await this.services.reloadKeys().catch(() => undefined);
          this.#verified.clear();
          this.#refused.clear();
          break;
        case 'identity_provider':
          break;
      }
    }
  }

  #revokeFromLog(key: string): void {
    // The entry lives as long as anything it revokes; the longest token lifetime bounds that.
    const expires = this.services.clock.now() + this.services.keyPolicy.maxTokenLifetimeSeconds * 1000;
    this.#revoked.set(key, Math.max(this.#revoked.get(key) ?? 0, expires));
  }

  /** Records a revocation this process made, before the feed brings it back. */
  noteRevocation(kind: RevocationKind, value: string, expiresAt: Date): void {
    const key = `${kind}:${value}`;
    this.#revoked.set(key, Math.max(this.#revoked.get(key) ?? 0, expiresAt.getTime()));
  }

  isRevoked(kind: RevocationKind, value: string): boolean {
    // Usually nothing is revoked: then there is no key to build.
    if (this.#revoked.size === 0) return false;
    const key = `${kind}:${value}`;
    const expires = this.#revoked.get(key);
    if (expires === undefined) return false;
    if (expires > this.services.clock.now()) return true;
    this.#revoked.delete(key);
    return false;
  }

  findUser(id: string): Promise<UserRecord | undefined> {
    return this.#memo(this.#users, id, () => this.#users$.findById(id));
  }

  findClient(clientId: string): Promise<ClientRecord | undefined> {
    return this.#memo(this.#clients, clientId, () => this.services.storage.clients.findById(clientId));
  }

  findApiKey(prefix: string): Promise<ApiKeyRecord | undefined> {
    return this.#memo(this.#apiKeys, prefix, () => this.services.storage.apiKeys.findByPrefix(prefix));
  }

  /**
   * The record of a presented API key that passed {@link authenticateApiKey} before and is live
   * with `scope`, found synchronously by the key's hash; `undefined` otherwise (then ask
   * {@link authenticateApiKey}, which decides and throws).
   */
  knownApiKey(presented: string | undefined, scope: ApiKeyScope): ApiKeyRecord | undefined {
    if (presented === undefined) return undefined;
    const hit = this.#presentedKeys.get(tokenKey(presented));
    return hit !== undefined && hit.revokedAt === null && hit.scopes.includes(scope) ? hit : undefined;
  }

  /**
   * Checks a presented API key like `authenticateApiKey` does, remembering keys that passed by a
   * hash of the key, so the review path does not hash through Web Crypto on every call. A revoked
   * key is forgotten when the change feed says so.
   */
  async authenticateApiKey(presented: string | undefined, scope: ApiKeyScope): Promise<ApiKeyRecord> {
    const hit = this.knownApiKey(presented, scope);
    if (hit !== undefined) return hit;
    const record = await authenticateApiKey(presented, scope, (prefix) => this.findApiKey(prefix));
    this.#presentedKeys.set(tokenKey(presented as string), record);
    return record;
  }

  #memo<V>(cache: Bounded<Promise<V>>, key: string, load: () => Promise<V>): Promise<V> {
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const loading = load();
    cache.set(key, loading);
    // A failed load is not remembered.
    loading.catch(() => cache.delete(key));
    return loading;
  }

  /**
   * Verifies a JWT access token, remembering a success by the token's hash until it expires and
   * a bad signature in a smaller cache. Other refusals cost no signature check, and some may
   * change (a key not loaded yet, a token not valid yet): they are not remembered.
   */
  async verify(token: string): Promise<AccessTokenVerification> {
    const key = tokenKey(token);
    const now = this.services.clock.now();
    const hit = this.#verified.get(key);
    if (hit !== undefined) {
      if (!hit.ok || hit.claims.exp * 1000 > now) return hit;
      return { ok: false, reason: 'expired' };
    }
    const refused = this.#refused.get(key);
    if (refused !== undefined) return refused;
    const result = await verifyAccessToken(
      this.services.keys(),
      this.services.config.issuer,
      token,
      this.services.clock,
    );
    if (result.ok) this.#verified.set(key, result);
    else if (result.reason === 'bad_signature') this.#refused.set(key, result);
    return result;
  }

  /**
   * The live-token context of token review, userinfo and introspection, served from memory. One
   * object for the directory's life (not one per request): `keys` reads the current key ring.
   */
  liveTokenContext(): LiveTokenContext {
    this.#context ??= this.#makeLiveTokenContext();
    return this.#context;
  }

  #makeLiveTokenContext(): LiveTokenContext {
    const services = this.services;
    return {
      issuer: services.config.issuer,
      get keys() {
        return services.keys();
      },
      clock: services.clock,
      findUser: (id) => this.findUser(id),
      findClient: (id) => this.findClient(id),
      // The same settled promises every time: awaiting them is awaiting a fresh one.
      isRevoked: (kind, value) => (this.isRevoked(kind, value) ? REVOKED : NOT_REVOKED),
      verify: (token) => this.verify(token),
    };
  }
}

const directories = new WeakMap<Services, Directory>();

/** The running server's directory (see `startServer`), if there is one. */
export function directoryOf(services: Services): Directory | undefined {
  return directories.get(services);
}

export function attachDirectory(services: Services, directory: Directory): void {
  directories.set(services, directory);
}

/** The live-token context for `services`: from memory in a running server, from storage otherwise. */
export function liveTokenContextFor(services: Services): LiveTokenContext {
  const directory = directoryOf(services);
  if (directory !== undefined) return directory.liveTokenContext();
  const users = effectiveUsers(services);
  return {
    issuer: services.config.issuer,
    keys: services.keys(),
    clock: services.clock,
    findUser: (id) => users.findById(id),
    findClient: (id) => services.storage.clients.findById(id),
    isRevoked: (kind, value) =>
      services.storage.revocations.isRevoked(kind, value, new Date(services.clock.now())),
  };
}

/** API keys by prefix, from memory in a running server. */
export function apiKeyLookupFor(services: Services): (prefix: string) => Promise<ApiKeyRecord | undefined> {
  return (prefix) =>
    directoryOf(services)?.findApiKey(prefix) ?? services.storage.apiKeys.findByPrefix(prefix);
}
