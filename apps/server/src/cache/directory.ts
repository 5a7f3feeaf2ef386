import { hash } from 'node:crypto';
import {
  type AccessTokenVerification,
  type ApiKeyRecord,
  type Clock,
  type ClusterRecord,
  type ReadCache,
  type RevocationKind,
  type Storage,
  StorageUnavailableError,
  type TrustRecord,
  type UserRecord,
} from '@idgate/core';
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
  /** Each entry, the oldest first. */
  forEach(visit: (key: string, value: V) => void): void {
    for (const [key, value] of this.#map) visit(key, value);
  }
}

/** A load held by the directory, and whether it has answered. */
interface Held<V> {
  readonly loading: Promise<V>;
  /** `loading` fulfilled: only then may it outlive a resync as a previous answer. */
  answered: boolean;
}

/** A cache of loads and, beside it, what the loads answered before the last resync. */
class Generations<V> {
  readonly current: Bounded<Held<V>>;
  /**
   * Answers from before the last resync, each a fulfilled promise (never a load that was still
   * pending at the resync: it may fail later and must not take the place of a good answer).
   */
  readonly previous: Bounded<Promise<V>>;
  constructor(max: number) {
    this.current = new Bounded(max);
    this.previous = new Bounded(max);
  }
  /** A resync: what is held becomes the previous generation, the current one starts empty. */
  turn(): void {
    this.current.forEach((key, held) => {
      if (held.answered) this.previous.set(key, held.loading);
    });
    this.current.clear();
  }
  delete(key: string): void {
    this.current.delete(key);
    this.previous.delete(key);
  }
  clear(): void {
    this.current.clear();
    this.previous.clear();
  }
}

// One-shot `crypto.hash` (Node ≥ 20.12): the same digest as `createHash`, without a Hash object.
const tokenKey = (token: string) => hash('sha256', token, 'base64url');

/**
 * How many users (each in two generations, and again as tokens describe them) and verified tokens
 * are held: what a cluster's reviews over 20,000 people need, and a bound on the memory of every
 * per-token and per-user cache whatever the load (bench/README.md, the soak).
 */
const MAX_USERS = 20_000;
const MAX_VERIFIED_TOKENS = 20_000;

/**
 * The claims of a verified token that core reads from it (review, introspection, userinfo,
 * assurance): what a token says of its user besides (names, groups — a cluster token may carry
 * thousands) is read from the user record, so a remembered verification keeps only these.
 */
const VERIFIED_CLAIMS = [
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'nbf',
  'jti',
  'client_id',
  'scope',
  'sid',
  'auth_time',
  'acr',
  'amr',
] as const;

/**
 * The claims a token exchange's token (`client_id` `trust:<name>`) is reviewed from, kept too: it
 * has no user record to read them from, and a trust gives at most 64 groups.
 */
const WORKLOAD_CLAIMS = ['trust', 'preferred_username', 'groups', 'act'] as const;

/** `verification` with only {@link VERIFIED_CLAIMS} of its claims. */
function leanVerification(verification: AccessTokenVerification): AccessTokenVerification {
  if (!verification.ok) return verification;
  const claims: Record<string, unknown> = {};
  for (const name of VERIFIED_CLAIMS) {
    const value = verification.claims[name];
    if (value !== undefined) claims[name] = value;
  }
  if (verification.claims.client_id.startsWith('trust:')) {
    const raw = verification.claims as unknown as Record<string, unknown>;
    for (const name of WORKLOAD_CLAIMS) if (raw[name] !== undefined) claims[name] = raw[name];
  }
  return {
    ok: true,
    claims: claims as typeof verification.claims,
    audience: verification.audience,
    scope: verification.scope,
  };
}

const REVOKED = Promise.resolve(true);
const NOT_REVOKED = Promise.resolve(false);
const NO_NOT_BEFORE = Promise.resolve(undefined);

/** What the directory reads through and answers about. */
export interface DirectoryOptions {
  /** The storage it caches (writes go straight through). */
  storage: Storage;
  clock: Clock;
  /** Reloads keys from storage (another process rotated them). */
  reloadKeys(): Promise<unknown>;
  /** The longest token lifetime: how long a revocation heard from the change log must be kept. */
  maxTokenLifetimeSeconds: number;
  /**
   * How long (s) the directory may go without hearing from the database — the change feed's last
   * successful read, or a resync — before it stops answering from memory and reads through to the
   * database (which answers 503 while it is away). 0 or absent: no limit.
   */
  maxStalenessSeconds?: number;
  /**
   * Whether the database answers now (StorageHealth). While it does not, what was known before
   * the last resync is answered at once instead of after a query's timeout.
   */
  storageAvailable?(): boolean;
}

/** What the directory follows: the change feed, or a stand-in for it. */
export type ChangeSource = Pick<ChangeFeed, 'subscribe' | 'onResync' | 'onSynced'>;

/**
 * What the hot paths read — users (and as tokens describe them), clients, API keys, the
 * revocation set and token verifications — held in memory and kept in step by this process's own
 * changes and the change feed, so a token review touches no database.
 *
 * `storage` is the storage it was given with those reads served from memory: a caching decorator,
 * so callers never choose between a cache and the database. The rest is core's {@link ReadCache}:
 * core says what a token's user or a verification is, the directory remembers it. Verified tokens
 * are remembered by a hash of the token (never the token itself) until their `exp`; only the
 * signature check is, so revocations and disabled users take effect at once.
 */
export class Directory implements ReadCache {
  readonly storage: Storage;
  readonly #options: DirectoryOptions;
  readonly #users = new Generations<UserRecord | undefined>(MAX_USERS);
  /** Users as tokens describe them: their own groups and those of their linked identities. */
  readonly #subjects = new Generations<UserRecord | undefined>(MAX_USERS);
  readonly #clients = new Generations<Awaited<ReturnType<Storage['clients']['findById']>>>(10_000);
  readonly #apiKeys = new Generations<ApiKeyRecord | undefined>(10_000);
  /**
   * Clusters and trusts, read on every token request and review: a few dozen rows, held whole
   * (the list under `*`, each by name) and forgotten whole when one changes.
   */
  readonly #clusters = new Generations<ClusterRecord[]>(1);
  readonly #clusterByName = new Generations<ClusterRecord | undefined>(1_000);
  readonly #trusts = new Generations<TrustRecord[]>(1);
  readonly #trustByName = new Generations<TrustRecord | undefined>(1_000);
  /** Tokens that verified, until their `exp`. */
  readonly #verified = new Bounded<AccessTokenVerification>(MAX_VERIFIED_TOKENS);
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
  /** The size of {@link #revoked} at which its expired entries are swept. */
  #sweepRevokedAt = 1024;
  /** `scope:subject` → not-before (ms): every one set, read whole at start and at each resync. */
  readonly #notBefore = new Map<string, number>();
  /** When (the options' clock, ms) the directory last heard from the database. */
  #syncedAt: number;

  constructor(options: DirectoryOptions) {
    this.#options = options;
    this.#syncedAt = options.clock.now();
    const { storage } = options;
    const { users, clients, apiKeys, revocations, notBefore, clusters, trusts } = storage;
    this.storage = {
      ...storage,
      users: { ...users, findById: (id) => this.#memo(this.#users, id, (key) => users.findById(key)) },
      clients: {
        ...clients,
        findById: (id) => this.#memo(this.#clients, id, (key) => clients.findById(key)),
      },
      apiKeys: {
        ...apiKeys,
        findByPrefix: (prefix) => this.#memo(this.#apiKeys, prefix, (key) => apiKeys.findByPrefix(key)),
      },
      // A copy of the held list each time: a caller may sort what it is given.
      clusters: {
        ...clusters,
        list: async () => [...(await this.#memo(this.#clusters, '*', () => clusters.list()))],
        findByName: (name) =>
          this.#memo(this.#clusterByName, name.toLowerCase(), () => clusters.findByName(name)),
      },
      trusts: {
        ...trusts,
        list: async () => [...(await this.#memo(this.#trusts, '*', () => trusts.list()))],
        findByName: (name) =>
          this.#memo(this.#trustByName, name.toLowerCase(), () => trusts.findByName(name)),
      },
      revocations: {
        ...revocations,
        isRevoked: (kind, value) => this.#isRevokedNow(kind, value),
      },
      // Always from memory, stale or not: it is read inside grant steps' transactions (a read
      // through this storage would wait for them on SQLite), and nothing sets one while the
      // database is away.
      notBefore: {
        ...notBefore,
        latestFor: (clientId, userId) => {
          const latest = this.notBefore(clientId, userId);
          // Usually none is set: the same settled promise every time, as for revocations.
          return latest === undefined ? NO_NOT_BEFORE : Promise.resolve(latest);
        },
      },
    };
  }

  /**
   * Loads the revocation set and follows this process's changes and, when given, `feed` (whose
   * successful reads are what keeps the directory fresh, see `maxStalenessSeconds`).
   */
  async start(local: LocalChanges, feed?: ChangeSource): Promise<void> {
    this.#replaceRevocations(await this.#readRevocations());
    this.#replaceNotBefore(await this.#options.storage.notBefore.list());
    local.subscribe((topic, key) => void this.#apply([{ id: 0, topic, key }]));
    if (feed !== undefined) {
      feed.subscribe((changes) => void this.#apply(changes));
      feed.onResync(() => void this.resync());
      feed.onSynced(() => this.markSynced());
    }
  }

  /** The database was heard from now: what the directory holds is up to date as of now. */
  markSynced(): void {
    this.#syncedAt = this.#options.clock.now();
  }

  /**
   * Whether the directory has gone longer than `maxStalenessSeconds` without hearing from the
   * database; then it answers nothing from memory.
   */
  get stale(): boolean {
    const max = this.#options.maxStalenessSeconds ?? 0;
    return max > 0 && this.#options.clock.now() - this.#syncedAt > max * 1000;
  }

  /**
   * Drops what is held and reloads the revocation set and the keys — only once the database has
   * answered: a resync that fails (an outage) keeps the last good state, so reviews of known
   * tokens go on being answered from memory for an outage of any length (see `stale`).
   * @returns whether it resynced.
   */
  async resync(): Promise<boolean> {
    let live: Awaited<ReturnType<Storage['revocations']['listLive']>>;
    let notBefore: Awaited<ReturnType<Storage['notBefore']['list']>>;
    try {
      live = await this.#readRevocations();
      notBefore = await this.#options.storage.notBefore.list();
    } catch {
      return false;
    }
    // What was known stays at hand for an outage that starts before it is read again.
    this.#users.turn();
    this.#subjects.turn();
    this.#clients.turn();
    this.#apiKeys.turn();
    this.#clusters.turn();
    this.#clusterByName.turn();
    this.#trusts.turn();
    this.#trustByName.turn();
    this.#presentedKeys.clear();
    this.#verified.clear();
    this.#refused.clear();
    this.#replaceRevocations(live);
    this.#replaceNotBefore(notBefore);
    this.markSynced();
    await this.#options.reloadKeys().catch(() => undefined);
    return true;
  }

  #replaceNotBefore(all: Awaited<ReturnType<Storage['notBefore']['list']>>): void {
    this.#notBefore.clear();
    for (const entry of all)
      this.#notBefore.set(`${entry.scope}:${entry.subject}`, entry.notBefore.getTime());
  }

  /** A not-before set (`<ms> <scope>:<subject>`, as the change log names it), applied at once. */
  #raiseNotBefore(change: string): void {
    const space = change.indexOf(' ');
    const at = Number(change.slice(0, space));
    const key = change.slice(space + 1);
    // Raised only: a change heard late never lowers what is held.
    if (space > 0 && Number.isSafeInteger(at))
      this.#notBefore.set(key, Math.max(this.#notBefore.get(key) ?? 0, at));
  }

  /**
   * The latest not-before of a token of `clientId` for `userId`: the global one, the client's and
   * the user's. Usually none is set: then nothing is looked up.
   */
  notBefore(clientId: string | null, userId: string | null): Date | undefined {
    if (this.#notBefore.size === 0) return undefined;
    const times = [
      this.#notBefore.get('global:'),
      clientId === null ? undefined : this.#notBefore.get(`client:${clientId}`),
      userId === null ? undefined : this.#notBefore.get(`user:${userId}`),
    ].filter((t): t is number => t !== undefined);
    return times.length === 0 ? undefined : new Date(Math.max(...times));
  }

  #readRevocations() {
    const { storage, clock } = this.#options;
    return storage.revocations.listLive(new Date(clock.now()));
  }

  #replaceRevocations(live: Awaited<ReturnType<Storage['revocations']['listLive']>>): void {
    this.#revoked.clear();
    for (const entry of live) this.#revoked.set(`${entry.kind}:${entry.value}`, entry.expiresAt.getTime());
  }

  /**
   * Whether `kind:value` is revoked: from memory — the same settled promises every time: awaiting
   * them is awaiting a fresh one — or from the database once the directory is stale.
   */
  #isRevokedNow(kind: RevocationKind, value: string): Promise<boolean> {
    const { storage, clock } = this.#options;
    if (this.stale) return storage.revocations.isRevoked(kind, value, new Date(clock.now()));
    return this.isRevoked(kind, value) ? REVOKED : NOT_REVOKED;
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
          // Forgotten before and after the reload: a key retired at once verifies nothing from now.
          this.#verified.clear();
          this.#refused.clear();
          await this.#options.reloadKeys().catch(() => undefined);
          this.#verified.clear();
          this.#refused.clear();
          break;
        case 'cluster':
          this.#clusters.clear();
          this.#clusterByName.clear();
          break;
        case 'trust':
          this.#trusts.clear();
          this.#trustByName.clear();
          break;
        case 'identity_provider':
          break;
        case 'not_before':
          this.#raiseNotBefore(change.key);
          break;
      }
    }
  }

  #revokeFromLog(key: string): void {
    // The entry lives as long as anything it revokes; the longest token lifetime bounds that.
    const now = this.#options.clock.now();
    const expires = now + this.#options.maxTokenLifetimeSeconds * 1000;
    this.#revoked.set(key, Math.max(this.#revoked.get(key) ?? 0, expires));
    // Revocations name tokens: expired ones go when the set has doubled since the last sweep
    // (not only when looked up), so it holds the live ones and at most as many others.
    if (this.#revoked.size >= this.#sweepRevokedAt) {
      for (const [name, until] of this.#revoked) if (until <= now) this.#revoked.delete(name);
      this.#sweepRevokedAt = Math.max(1024, this.#revoked.size * 2);
    }
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

  /**
   * The user `id` as tokens describe them, as core's `load` reads them: not held yet, `load` may
   * read through a transaction's storage (from inside it; on SQLite a read through another storage
   * would wait for the transaction to end), which must not have changed the user or their
   * identities: what it reads is remembered as committed.
   */
  subject(
    id: string,
    load: (id: string) => Promise<UserRecord | undefined>,
  ): Promise<UserRecord | undefined> {
    return this.#memo(this.#subjects, id, load);
  }

  /**
   * A presented API key that authenticated before (remembered by a one-shot SHA-256 of the key,
   * never the key itself); core checks it is live and has the scope. Stale, none.
   */
  apiKey(presented: string): ApiKeyRecord | undefined {
    return this.stale ? undefined : this.#presentedKeys.get(tokenKey(presented));
  }

  /** Remembers a key that authenticated; a revoked key is forgotten when the change log says so. */
  rememberApiKey(presented: string, record: ApiKeyRecord): void {
    this.#presentedKeys.set(tokenKey(presented), record);
  }

  /**
   * `key` from memory, else loaded (and remembered). What was known before the last resync is
   * answered at once while the load that replaces it is under way — and instead of it when the
   * database is known to be away or the load fails for want of it — so a known token's review
   * never waits on the database. Stale, the directory answers nothing from memory.
   */
  #memo<V>(cache: Generations<V>, key: string, load: (key: string) => Promise<V>): Promise<V> {
    const stale = this.stale;
    const held = stale ? undefined : cache.current.get(key);
    if (held?.answered === true) return held.loading;
    const before = stale ? undefined : cache.previous.get(key);
    if (held !== undefined) return before ?? held.loading;
    // The database known to be away: what it said before, without a load that would fail.
    if (before !== undefined && this.#options.storageAvailable?.() === false) return before;
    const loading = load(key);
    const entry: Held<V> = { loading, answered: false };
    cache.current.set(key, entry);
    loading.then(
      () => {
        entry.answered = true;
      },
      // A failed load is not remembered (unless a newer one took its place meanwhile).
      () => {
        if (cache.current.get(key) === entry) cache.current.delete(key);
      },
    );
    if (before !== undefined) return before;
    if (stale) return loading;
    return loading.catch((error: unknown) => {
      const since = error instanceof StorageUnavailableError ? cache.previous.get(key) : undefined;
      if (since === undefined) throw error;
      return since;
    });
  }

  /**
   * `verify(token)`, remembering a success by the token's hash until it expires and a bad
   * signature in a smaller cache. Other refusals cost no signature check, and some may change (a
   * key not loaded yet, a token not valid yet): they are not remembered.
   */
  async verification(
    token: string,
    verify: (token: string) => Promise<AccessTokenVerification>,
  ): Promise<AccessTokenVerification> {
    const key = tokenKey(token);
    const hit = this.#verified.get(key);
    if (hit !== undefined) {
      if (!hit.ok || hit.claims.exp * 1000 > this.#options.clock.now()) return hit;
      return { ok: false, reason: 'expired' };
    }
    const refused = this.#refused.get(key);
    if (refused !== undefined) return refused;
    const result = await verify(token);
    if (result.ok) {
      const lean = leanVerification(result);
      this.#verified.set(key, lean);
      return lean;
    }
    if (result.reason === 'bad_signature') this.#refused.set(key, result);
    return result;
  }
}
