import { hash } from 'node:crypto';
import {
  type AccessTokenVerification,
  type ApiKeyRecord,
  authenticateApiKey,
  type Clock,
  isApiKeyLive,
  type KeyRing,
  type LiveTokenContext,
  type RevocationKind,
  type Storage,
  type UserRecord,
  verifyAccessToken,
} from '@idgate/core';
import type { ApiKeyScope } from '@idgate/schema';
import { withIdentityGroups } from '../federation/effective-users.js';
import type { Change, ChangeFeed } from './change-feed.js';
import type { LocalChanges } from './change-log.js';

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
}

// One-shot `crypto.hash` (Node ≥ 20.12): the same digest as `createHash`, without a Hash object.
const tokenKey = (token: string) => hash('sha256', token, 'base64url');

const REVOKED = Promise.resolve(true);
const NOT_REVOKED = Promise.resolve(false);

/** What the directory reads through and answers about. */
export interface DirectoryOptions {
  /** The storage it caches (writes go straight through). */
  storage: Storage;
  issuer: string;
  clock: Clock;
  /** The key ring in force now. */
  keys(): KeyRing;
  /** Reloads keys from storage (another process rotated them). */
  reloadKeys(): Promise<unknown>;
  /** The longest token lifetime: how long a revocation heard from the change log must be kept. */
  maxTokenLifetimeSeconds: number;
}

/**
 * What the hot paths read — users (with their identities' groups), clients, API keys, the
 * revocation set and token verifications — held in memory and kept in step by this process's own
 * changes and the change feed, so a token review touches no database.
 *
 * `storage` is the storage it was given with those reads served from memory: a caching decorator,
 * so callers never choose between a cache and the database. Verified tokens are cached by a hash
 * of the token (never the token itself) until their `exp`; only the signature check is cached, so
 * revocations and disabled users take effect at once.
 */
export class Directory {
  readonly storage: Storage;
  readonly #options: DirectoryOptions;
  readonly #users = new Bounded<Promise<UserRecord | undefined>>(50_000);
  /** Users as tokens describe them: their own groups and those of their linked identities. */
  readonly #subjects = new Bounded<Promise<UserRecord | undefined>>(50_000);
  readonly #clients = new Bounded<Promise<Awaited<ReturnType<Storage['clients']['findById']>>>>(10_000);
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
  readonly #liveTokens: LiveTokenContext;

  constructor(options: DirectoryOptions) {
    this.#options = options;
    const { storage } = options;
    const { users, clients, apiKeys, revocations } = storage;
    this.storage = {
      ...storage,
      users: { ...users, findById: (id) => this.#memo(this.#users, id, () => users.findById(id)) },
      clients: {
        ...clients,
        findById: (id) => this.#memo(this.#clients, id, () => clients.findById(id)),
      },
      apiKeys: {
        ...apiKeys,
        findByPrefix: (prefix) => this.#memo(this.#apiKeys, prefix, () => apiKeys.findByPrefix(prefix)),
      },
      revocations: {
        ...revocations,
        isRevoked: (kind, value) => (this.isRevoked(kind, value) ? REVOKED : NOT_REVOKED),
      },
    };
    this.#liveTokens = {
      issuer: options.issuer,
      get keys() {
        return options.keys();
      },
      clock: options.clock,
      findUser: (id) => this.findSubject(id),
      findClient: (id) => this.storage.clients.findById(id),
      // The same settled promises every time: awaiting them is awaiting a fresh one.
      isRevoked: (kind, value) => (this.isRevoked(kind, value) ? REVOKED : NOT_REVOKED),
      verify: (token) => this.verify(token),
    };
  }

  /** Loads the revocation set and follows this process's changes and, when given, `feed`. */
  async start(local: LocalChanges, feed?: ChangeFeed): Promise<void> {
    await this.#loadRevocations();
    local.subscribe((topic, key) => void this.#apply([{ id: 0, topic, key }]));
    if (feed !== undefined) {
      feed.subscribe((changes) => void this.#apply(changes));
      feed.onResync(() => void this.resync());
    }
  }

  async resync(): Promise<void> {
    this.#users.clear();
    this.#subjects.clear();
    this.#clients.clear();
    this.#apiKeys.clear();
    this.#presentedKeys.clear();
    this.#verified.clear();
    this.#refused.clear();
    await this.#loadRevocations().catch(() => undefined);
    await this.#options.reloadKeys().catch(() => undefined);
  }

  async #loadRevocations(): Promise<void> {
    const { storage, clock } = this.#options;
    const live = await storage.revocations.listLive(new Date(clock.now()));
    this.#revoked.clear();
    for (const entry of live) this.#revoked.set(`${entry.kind}:${entry.value}`, entry.expiresAt.getTime());
  }

  async #apply(changes: Change[]): Promise<void> {
    for (const change of changes) {
      switch (change.topic) {
        case 'user':
          this.#users.delete(change.key);
          this.#subjects.delete(change.key);
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
          await this.#options.reloadKeys().catch(() => undefined);
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
    const expires = this.#options.clock.now() + this.#options.maxTokenLifetimeSeconds * 1000;
    this.#revoked.set(key, Math.max(this.#revoked.get(key) ?? 0, expires));
  }

  isRevoked(kind: RevocationKind, value: string): boolean {
    // Usually nothing is revoked: then there is no key to build.
    if (this.#revoked.size === 0) return false;
    const key = `${kind}:${value}`;
    const expires = this.#revoked.get(key);
    if (expires === undefined) return false;
    if (expires > this.#options.clock.now()) return true;
    this.#revoked.delete(key);
    return false;
  }

  /** The user `id` as tokens describe them: their own groups and their linked identities'. */
  findSubject(id: string): Promise<UserRecord | undefined> {
    return this.#memo(this.#subjects, id, async () => {
      const user = await this.storage.users.findById(id);
      return user === undefined ? undefined : withIdentityGroups(user, this.#options.storage.identities);
    });
  }

  /**
   * The record of a presented API key that passed {@link authenticateApiKey} before and is live
   * with `scope`, found synchronously by the key's hash; `undefined` otherwise (then ask
   * {@link Directory.authenticateApiKey}, which decides and throws).
   */
  knownApiKey(presented: string | undefined, scope: ApiKeyScope | null): ApiKeyRecord | undefined {
    if (presented === undefined) return undefined;
    const hit = this.#presentedKeys.get(tokenKey(presented));
    return hit !== undefined &&
      isApiKeyLive(hit, new Date(this.#options.clock.now())) &&
      (scope === null || hit.scopes.includes(scope))
      ? hit
      : undefined;
  }

  /**
   * Checks a presented API key like `authenticateApiKey` does, remembering keys that passed by a
   * one-shot SHA-256 of the key (never the key itself), so a known key is answered without a
   * promise or a storage read. A revoked key is forgotten when the change log says so.
   */
  async authenticateApiKey(presented: string | undefined, scope: ApiKeyScope | null): Promise<ApiKeyRecord> {
    const hit = this.knownApiKey(presented, scope);
    if (hit !== undefined) return hit;
    const record = await authenticateApiKey(
      presented,
      scope,
      (prefix) => this.storage.apiKeys.findByPrefix(prefix),
      new Date(this.#options.clock.now()),
    );
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
    const { clock, issuer } = this.#options;
    const now = clock.now();
    const hit = this.#verified.get(key);
    if (hit !== undefined) {
      if (!hit.ok || hit.claims.exp * 1000 > now) return hit;
      return { ok: false, reason: 'expired' };
    }
    const refused = this.#refused.get(key);
    if (refused !== undefined) return refused;
    const result = await verifyAccessToken(this.#options.keys(), issuer, token, clock);
    if (result.ok) this.#verified.set(key, result);
    else if (result.reason === 'bad_signature') this.#refused.set(key, result);
    return result;
  }

  /**
   * The live-token context of token review, userinfo and introspection, served from memory. One
   * object for the directory's life (not one per request): `keys` reads the current key ring.
   */
  liveTokenContext(): LiveTokenContext {
    return this.#liveTokens;
  }
}
