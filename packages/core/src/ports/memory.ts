import type {
  ApiKeyRecord,
  ClientRecord,
  ClusterRecord,
  GroupRecord,
  NewUser,
  NotBeforeRecord,
  RevocationKind,
  RevocationRecord,
  SigningKeyRecord,
  SubjectTokenUseRecord,
  TrustRecord,
  UserPatch,
  UserRecord,
} from '../model.js';
import { LoginThrottle } from '../security/login-throttle.js';
import { type AuditTables, createMemoryAuditRepository, emptyAuditTables } from './memory-audit.js';
import {
  createMemoryDeclarationRepository,
  type DeclarationTables,
  emptyDeclarationTables,
} from './memory-declarations.js';
import { createMemoryFactorRepository, emptyFactorTables, type FactorTables } from './memory-factors.js';
import {
  createMemoryFederationRepositories,
  emptyFederationTables,
  type FederationTables,
} from './memory-federation.js';
import { createMemoryOidcRepositories, emptyOidcTables, type OidcTables } from './memory-oidc.js';
import type { PasswordHasher } from './runtime.js';
import { type Storage, StorageConflictError, type StoredGroup, type UserPageQuery } from './storage.js';

interface Tables extends OidcTables, FederationTables, AuditTables, DeclarationTables, FactorTables {
  users: Map<string, UserRecord>;
  clients: Map<string, ClientRecord>;
  apiKeys: Map<string, ApiKeyRecord>;
  signingKeys: Map<string, SigningKeyRecord>;
  revocations: Map<string, RevocationRecord>;
  /** Keyed by `scope:subject`. */
  notBefore: Map<string, NotBeforeRecord>;
  clusters: Map<string, ClusterRecord>;
  groups: Map<string, GroupRecord>;
  trusts: Map<string, TrustRecord>;
  /** Keyed by `issuer jti`. */
  subjectTokenUses: Map<string, SubjectTokenUseRecord>;
}

const copy = <T>(value: T): T => structuredClone(value);

function emptyTables(): Tables {
  return {
    users: new Map(),
    clients: new Map(),
    apiKeys: new Map(),
    signingKeys: new Map(),
    revocations: new Map(),
    notBefore: new Map(),
    clusters: new Map(),
    groups: new Map(),
    trusts: new Map(),
    subjectTokenUses: new Map(),
    ...emptyOidcTables(),
    ...emptyFederationTables(),
    ...emptyAuditTables(),
    ...emptyDeclarationTables(),
    ...emptyFactorTables(),
  };
}

/**
 * Storage in memory, with the same semantics as the SQL adapters: for tests, and for runtimes
 * without a database. Records are copied in and out, so callers cannot mutate stored state.
 * A failed transaction restores a snapshot, so it is meant for one caller at a time.
 * @example const storage = createMemoryStorage();
 */
export function createMemoryStorage(): Storage {
  let tables = emptyTables();
  const byUsername = (username: string) =>
    [...tables.users.values()].find((user) => user.username.toLowerCase() === username.toLowerCase());
  const ensureGroups = (names: readonly string[], at: Date): string[] => {
    const created: string[] = [];
    for (const name of names) {
      if (tables.groups.has(name)) continue;
      tables.groups.set(name, { name, description: null, createdAt: at, updatedAt: at });
      created.push(name);
    }
    return created;
  };
  const withMembers = (group: GroupRecord): StoredGroup => {
    let members = 0;
    for (const user of tables.users.values()) if (user.groups.includes(group.name)) members++;
    return { ...copy(group), members };
  };

  const storage: Storage = {
    users: {
      async create(user: NewUser) {
        if (byUsername(user.username) !== undefined) throw new StorageConflictError('username');
        if (tables.users.has(user.id)) throw new StorageConflictError('id');
        const record: UserRecord = {
          ...copy(user),
          disabled: user.disabled ?? false,
          updatedAt: user.createdAt,
        };
        tables.users.set(user.id, record);
        ensureGroups(record.groups, record.createdAt);
        return copy(record);
      },
      async findById(id) {
        return copy(tables.users.get(id));
      },
      async findByUsername(username) {
        return copy(byUsername(username));
      },
      async findByEmail(email) {
        const folded = email.toLowerCase();
        const key = (user: UserRecord) => user.username.toLowerCase();
        return copy(
          [...tables.users.values()]
            .filter((user) => user.email?.toLowerCase() === folded)
            .sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))
            .slice(0, 10),
        );
      },
      async list() {
        const key = (user: UserRecord) => user.username.toLowerCase();
        return copy(
          [...tables.users.values()].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)),
        );
      },
      async update(id, patch: UserPatch) {
        const current = tables.users.get(id);
        if (current === undefined) return undefined;
        const next = { ...current, ...copy(patch) };
        tables.users.set(id, next);
        if (patch.groups !== undefined) ensureGroups(patch.groups, patch.updatedAt);
        return copy(next);
      },
      async page(query: UserPageQuery) {
        const { after, group, status, text, lock } = query;
        const locked = async (user: UserRecord) => {
          if (lock === undefined) return false;
          const policy = { ...lock, maxFailuresPerAddress: Number.MAX_SAFE_INTEGER };
          const clock = { now: () => lock.now.getTime() };
          return (await new LoginThrottle(storage.loginAttempts, policy, clock).check(user.username)).locked;
        };
        const needle = text?.toLowerCase();
        const matches = async (user: UserRecord) =>
          (after === undefined || user.username.toLowerCase() > after) &&
          (group === undefined || user.groups.includes(group)) &&
          (needle === undefined ||
            [user.username, user.email, user.displayName].some((v) => v?.toLowerCase().includes(needle))) &&
          (status === undefined ||
            (status === 'disabled'
              ? user.disabled
              : status === 'locked'
                ? await locked(user)
                : !user.disabled && !(await locked(user))));
        const page: UserRecord[] = [];
        for (const user of await storage.users.list()) {
          if (page.length >= query.limit) break;
          if (await matches(user)) page.push(user);
        }
        return page;
      },
      async groups(query) {
        const counts = new Map<string, number>();
        for (const user of tables.users.values())
          for (const group of user.groups) counts.set(group, (counts.get(group) ?? 0) + 1);
        return [...counts]
          .filter(
            ([name]) => (query.after === undefined || name > query.after) && (query.name ?? name) === name,
          )
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .slice(0, query.limit)
          .map(([name, members]) => ({ name, members }));
      },
      async remove(id) {
        return tables.users.delete(id);
      },
      async count() {
        return tables.users.size;
      },
    },
    clients: {
      async create(client) {
        if (tables.clients.has(client.clientId)) throw new StorageConflictError('clientId');
        const stored = withoutFalsePolicy(client);
        tables.clients.set(client.clientId, copy(stored));
        return copy(stored);
      },
      async findById(clientId) {
        return copy(tables.clients.get(clientId));
      },
      async list() {
        return copy([...tables.clients.values()].sort(byCreationThenId));
      },
      async listPage(limit, after) {
        const sorted = [...tables.clients.values()].sort(byCreationThenId);
        const rest =
          after === undefined
            ? sorted
            : sorted.filter(
                (c) => byCreationThenId(c, { createdAt: after.createdAt, clientId: after.clientId }) > 0,
              );
        return copy(rest.slice(0, limit));
      },
      async update(client) {
        const current = tables.clients.get(client.clientId);
        if (current === undefined) return false;
        tables.clients.set(
          client.clientId,
          copy(withoutFalsePolicy({ ...client, createdAt: current.createdAt })),
        );
        return true;
      },
      async remove(clientId) {
        return tables.clients.delete(clientId);
      },
      async setAudiences(clientId, audiences) {
        const client = tables.clients.get(clientId);
        if (client === undefined) return false;
        client.audiences = [...audiences];
        return true;
      },
      async count() {
        return tables.clients.size;
      },
    },
    apiKeys: {
      async create(key) {
        if ([...tables.apiKeys.values()].some((k) => k.prefix === key.prefix))
          throw new StorageConflictError('prefix');
        if (tables.apiKeys.has(key.id)) throw new StorageConflictError('id');
        tables.apiKeys.set(key.id, copy(key));
        return copy(key);
      },
      async findByPrefix(prefix) {
        return copy([...tables.apiKeys.values()].find((key) => key.prefix === prefix));
      },
      async findById(id) {
        return copy(tables.apiKeys.get(id));
      },
      async update(id, changes) {
        const key = tables.apiKeys.get(id);
        if (key === undefined || key.revokedAt !== null) return undefined;
        if (changes.name !== undefined) key.name = changes.name;
        if (changes.expiresAt !== undefined) key.expiresAt = changes.expiresAt;
        return copy(key);
      },
      async list() {
        const key = (k: { createdAt: Date; id: string }) => ({ createdAt: k.createdAt, clientId: k.id });
        return copy([...tables.apiKeys.values()].sort((a, b) => byCreationThenId(key(a), key(b))));
      },
      async listPage(limit, after) {
        const key = (k: { createdAt: Date; id: string }) => ({ createdAt: k.createdAt, clientId: k.id });
        const sorted = [...tables.apiKeys.values()].sort((a, b) => byCreationThenId(key(a), key(b)));
        const rest =
          after === undefined ? sorted : sorted.filter((k) => byCreationThenId(key(k), key(after)) > 0);
        return copy(rest.slice(0, limit));
      },
      async revoke(idOrPrefix, at) {
        const keys = [...tables.apiKeys.values()];
        const key = keys.find((k) => k.id === idOrPrefix) ?? keys.find((k) => k.prefix === idOrPrefix);
        if (key === undefined || key.revokedAt !== null) return false;
        key.revokedAt = at;
        return true;
      },
      async rebindCluster(name, cluster) {
        let rebound = 0;
        for (const key of tables.apiKeys.values()) {
          if (key.cluster?.name === name) {
            key.cluster = { name: cluster.name, audience: cluster.audience };
            rebound++;
          }
        }
        return rebound;
      },
      async revokeByCluster(name, at) {
        let revoked = 0;
        for (const key of tables.apiKeys.values()) {
          if (key.cluster?.name === name && key.revokedAt === null) {
            key.revokedAt = at;
            revoked++;
          }
        }
        return revoked;
      },
      async touch(id, at) {
        const key = tables.apiKeys.get(id);
        if (key !== undefined) key.lastUsedAt = at;
      },
      async count() {
        return tables.apiKeys.size;
      },
    },
    signingKeys: {
      async insert(key) {
        if (tables.signingKeys.has(key.kid)) throw new StorageConflictError('kid');
        tables.signingKeys.set(key.kid, copy(key));
      },
      async list() {
        const key = (k: SigningKeyRecord) => ({ createdAt: k.createdAt, clientId: k.kid });
        return copy([...tables.signingKeys.values()].sort((a, b) => byCreationThenId(key(b), key(a))));
      },
      async retire(kid, retiredAt, publishedUntil) {
        const key = tables.signingKeys.get(kid);
        if (key === undefined || key.retiredAt !== null) return false;
        key.retiredAt = retiredAt;
        key.publishedUntil = publishedUntil;
        return true;
      },
      async withdraw(kid, at) {
        const key = tables.signingKeys.get(kid);
        if (key === undefined) return false;
        if (
          key.publishedUntil !== null &&
          key.retiredAt !== null &&
          key.publishedUntil.getTime() <= at.getTime()
        )
          return false;
        if (key.retiredAt === null || key.retiredAt.getTime() > at.getTime()) key.retiredAt = new Date(at);
        key.publishedUntil = new Date(at);
        return true;
      },
    },
    notBefore: {
      async raise(entry) {
        const id = `${entry.scope}:${entry.subject}`;
        const existing = tables.notBefore.get(id);
        const kept =
          existing !== undefined && existing.notBefore.getTime() >= entry.notBefore.getTime()
            ? { ...existing, setAt: entry.setAt }
            : entry;
        tables.notBefore.set(id, copy(kept));
        return copy(kept);
      },
      async find(scope, subject) {
        return copy(tables.notBefore.get(`${scope}:${subject}`));
      },
      async list() {
        // Global first, then clients', then users'; by subject within a scope.
        const rank = { global: 0, client: 1, user: 2 } as const;
        const order = (a: NotBeforeRecord, b: NotBeforeRecord) =>
          rank[a.scope] - rank[b.scope] || (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0);
        return copy([...tables.notBefore.values()].sort(order));
      },
      async latestFor(clientId, userId) {
        const times = [
          tables.notBefore.get('global:'),
          clientId === null ? undefined : tables.notBefore.get(`client:${clientId}`),
          userId === null ? undefined : tables.notBefore.get(`user:${userId}`),
        ].flatMap((e) => (e === undefined ? [] : [e.notBefore.getTime()]));
        return times.length === 0 ? undefined : new Date(Math.max(...times));
      },
    },
    revocations: {
      async add(entry) {
        const id = `${entry.kind}:${entry.value}`;
        const existing = tables.revocations.get(id);
        if (existing === undefined || existing.expiresAt < entry.expiresAt)
          tables.revocations.set(id, copy(entry));
      },
      async isRevoked(kind: RevocationKind, value, now) {
        const entry = tables.revocations.get(`${kind}:${value}`);
        return entry !== undefined && entry.expiresAt.getTime() > now.getTime();
      },
      async listLive(now) {
        const order = (e: RevocationRecord) => `${e.kind}:${e.value}`;
        return copy(
          [...tables.revocations.values()]
            .filter((entry) => entry.expiresAt.getTime() > now.getTime())
            .sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0)),
        );
      },
      async purgeExpired(now) {
        let purged = 0;
        for (const [id, entry] of tables.revocations) {
          if (entry.expiresAt.getTime() <= now.getTime()) {
            tables.revocations.delete(id);
            purged++;
          }
        }
        return purged;
      },
    },
    groups: {
      async create(group) {
        if (tables.groups.has(group.name)) throw new StorageConflictError('name');
        tables.groups.set(group.name, copy(withoutFalsePolicy(group)));
        return copy(group);
      },
      async ensure(names, at) {
        return ensureGroups(names, at);
      },
      async find(name) {
        const group = tables.groups.get(name);
        return group === undefined ? undefined : withMembers(group);
      },
      async page(query) {
        return [...tables.groups.values()]
          .filter((group) => query.after === undefined || group.name > query.after)
          .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
          .slice(0, query.limit)
          .map(withMembers);
      },
      async update(name, changes) {
        const current = tables.groups.get(name);
        if (current === undefined) return undefined;
        const next: GroupRecord = withoutFalsePolicy({
          ...current,
          ...copy(changes),
        });
        if (next.name !== name) {
          if (tables.groups.has(next.name)) throw new StorageConflictError('name');
          tables.groups.delete(name);
        }
        tables.groups.set(next.name, next);
        return copy(next);
      },
      async remove(name) {
        return tables.groups.delete(name);
      },
    },
    clusters: {
      async create(cluster) {
        const record = { ...copy(cluster), name: cluster.name.toLowerCase() };
        if (tables.clusters.has(record.name)) throw new StorageConflictError('name');
        if ([...tables.clusters.values()].some((c) => c.audience === cluster.audience))
          throw new StorageConflictError('audience');
        tables.clusters.set(record.name, record);
        return copy(record);
      },
      async findByName(name) {
        return copy(tables.clusters.get(name.toLowerCase()));
      },
      async list() {
        return copy(
          [...tables.clusters.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
        );
      },
      async update(name, changes) {
        const current = tables.clusters.get(name.toLowerCase());
        if (current === undefined) return undefined;
        const next: ClusterRecord = {
          ...current,
          ...(changes.name === undefined ? {} : { name: changes.name.toLowerCase() }),
          ...(changes.audience === undefined ? {} : { audience: changes.audience }),
          ...(changes.requireMfa === undefined ? {} : { requireMfa: changes.requireMfa }),
        };
        if (next.name !== current.name && tables.clusters.has(next.name))
          throw new StorageConflictError('name');
        if (
          [...tables.clusters.values()].some((c) => c.name !== current.name && c.audience === next.audience)
        )
          throw new StorageConflictError('audience');
        tables.clusters.delete(current.name);
        tables.clusters.set(next.name, next);
        return copy(next);
      },
      async remove(name) {
        return tables.clusters.delete(name.toLowerCase());
      },
    },
    trusts: {
      async create(trust) {
        const record = { ...copy(trust), name: trust.name.toLowerCase() };
        if (tables.trusts.has(record.name)) throw new StorageConflictError('name');
        tables.trusts.set(record.name, record);
        return copy(record);
      },
      async findByName(name) {
        return copy(tables.trusts.get(name.toLowerCase()));
      },
      async list() {
        return copy(
          [...tables.trusts.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
        );
      },
      async update(trust) {
        const name = trust.name.toLowerCase();
        if (!tables.trusts.has(name)) return undefined;
        tables.trusts.set(name, { ...copy(trust), name });
        return copy(tables.trusts.get(name));
      },
      async remove(name) {
        return tables.trusts.delete(name.toLowerCase());
      },
    },
    subjectTokenUses: {
      async spend(use, now) {
        const key = `${use.issuer} ${use.jti}`;
        const held = tables.subjectTokenUses.get(key);
        if (held !== undefined && held.expiresAt.getTime() > now.getTime()) return false;
        tables.subjectTokenUses.set(key, copy(use));
        return true;
      },
      async purgeExpired(now) {
        let purged = 0;
        for (const [key, use] of tables.subjectTokenUses) {
          if (use.expiresAt.getTime() <= now.getTime()) {
            tables.subjectTokenUses.delete(key);
            purged++;
          }
        }
        return purged;
      },
    },
    // The OIDC-flow tables live in `tables` too, so a transaction's snapshot covers them.
    ...createMemoryOidcRepositories(() => tables),
    ...createMemoryFederationRepositories(() => tables),
    ...createMemoryAuditRepository(() => tables),
    ...createMemoryDeclarationRepository(() => tables),
    ...createMemoryFactorRepository(() => tables),
    async transaction(work) {
      const snapshot = copy(tables);
      try {
        return await work(storage);
      } catch (error) {
        tables = snapshot;
        throw error;
      }
    },
    async close() {},
  };
  return storage;
}

/**
 * A password hasher for tests only: fast and NOT secure (a salted SHA-256). The server uses argon2id.
 * @example const hasher = insecureTestPasswordHasher();
 */
export function insecureTestPasswordHasher(): PasswordHasher {
  const digest = async (salt: string, password: string) => {
    const bytes = new TextEncoder().encode(`${salt}:${password}`);
    return btoa(String.fromCharCode(...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))));
  };
  return {
    async hash(password) {
      const salt = crypto.randomUUID();
      return `test$${salt}$${await digest(salt, password)}`;
    },
    async verify(hash, password) {
      const [scheme, salt, expected] = hash.split('$');
      return scheme === 'test' && salt !== undefined && expected === (await digest(salt, password));
    },
  };
}

function byCreationThenId(
  a: { createdAt: Date; clientId: string },
  b: { createdAt: Date; clientId: string },
): number {
  const time = a.createdAt.getTime() - b.createdAt.getTime();
  if (time !== 0) return time;
  return a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0;
}

/** A record with `requireMfa` only when true, as the databases answer it. */
function withoutFalsePolicy<T extends { requireMfa?: boolean }>(record: T): T {
  if (record.requireMfa === true || !('requireMfa' in record)) return record;
  const { requireMfa: _false, ...rest } = record;
  return rest as T;
}
