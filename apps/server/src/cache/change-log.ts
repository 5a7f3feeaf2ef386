import { sql } from 'kysely';
import type { Database, SqlStorage } from '../storage/index.js';

/** What a change is about; the key names the thing (user id, client id, key prefix, ...). */
export type ChangeTopic =
  | 'user'
  | 'client'
  | 'api_key'
  | 'revocation'
  | 'signing_key'
  | 'identity_provider'
  | 'not_before'
  | 'cluster'
  | 'trust';

/** The PostgreSQL channel every replica listens on. */
export const CHANGE_CHANNEL = 'idgate_changes';

type ChangeListener = (topic: ChangeTopic, key: string) => void;

/**
 * This process's own changes, heard as soon as they are committed: its caches must not wait for
 * the change feed to see what it did itself. One bus per open database, made with the services.
 */
export class LocalChanges {
  readonly #listeners = new Set<ChangeListener>();

  subscribe(listener: ChangeListener): void {
    this.#listeners.add(listener);
  }

  publish(topic: ChangeTopic, key: string): void {
    for (const listener of this.#listeners) listener(topic, key);
  }
}

/**
 * Wraps a storage so that every write another server may hold in memory also appends a change
 * row, in the same transaction as the write. Applied to every process's storage, the CLI's
 * included, so `idgate users disable` reaches running servers too. Local listeners hear of a
 * change made in a transaction only once it has committed: a cache refilled before then would
 * keep the old value.
 */
export function recordChanges(storage: SqlStorage, database: Database, local: LocalChanges): SqlStorage {
  return wrap(storage, database, (topic, key) => local.publish(topic, key), local);
}

function wrap(
  storage: SqlStorage,
  database: Database,
  notify: ChangeListener,
  local: LocalChanges,
): SqlStorage {
  const log = async (topic: ChangeTopic, key: string) => {
    await storage.db.insertInto('change_log').values({ topic, key, created_at: Date.now() }).execute();
    // Delivered when the transaction commits, so a listener never reads ahead of the write.
    if (database.dialect === 'postgres')
      await sql`select pg_notify(${CHANGE_CHANNEL}, ${topic})`.execute(storage.db);
    notify(topic, key);
  };
  const after =
    <A extends unknown[], R>(
      call: (...args: A) => Promise<R>,
      change: (args: A, result: R) => Promise<unknown> | undefined,
    ) =>
    async (...args: A): Promise<R> => {
      const result = await call(...args);
      await change(args, result);
      return result;
    };
  const {
    users,
    clients,
    apiKeys,
    revocations,
    signingKeys,
    identityProviders,
    identities,
    notBefore,
    clusters,
    trusts,
  } = storage;
  return {
    ...storage,
    users: {
      ...users,
      update: after(users.update.bind(users), ([id], updated) =>
        updated === undefined ? undefined : log('user', id),
      ),
      remove: after(users.remove.bind(users), ([id], removed) => (removed ? log('user', id) : undefined)),
    },
    clients: {
      ...clients,
      create: after(clients.create.bind(clients), ([client]) => log('client', client.clientId)),
      update: after(clients.update.bind(clients), ([client], changed) =>
        changed ? log('client', client.clientId) : undefined,
      ),
      setAudiences: after(clients.setAudiences.bind(clients), ([clientId], changed) =>
        changed ? log('client', clientId) : undefined,
      ),
      remove: after(clients.remove.bind(clients), ([clientId], removed) =>
        removed ? log('client', clientId) : undefined,
      ),
    },
    apiKeys: {
      ...apiKeys,
      update: after(apiKeys.update.bind(apiKeys), ([id], updated) =>
        updated === undefined ? undefined : log('api_key', id),
      ),
      revoke: after(apiKeys.revoke.bind(apiKeys), ([idOrPrefix], revoked) =>
        revoked ? log('api_key', idOrPrefix) : undefined,
      ),
      revokeByCluster: after(apiKeys.revokeByCluster.bind(apiKeys), ([name], revoked) =>
        revoked > 0 ? log('api_key', `cluster:${name}`) : undefined,
      ),
      rebindCluster: after(apiKeys.rebindCluster.bind(apiKeys), ([name], rebound) =>
        rebound > 0 ? log('api_key', `cluster:${name}`) : undefined,
      ),
    },
    revocations: {
      ...revocations,
      add: after(revocations.add.bind(revocations), ([entry]) =>
        log('revocation', `${entry.kind}:${entry.value}`),
      ),
    },
    signingKeys: {
      ...signingKeys,
      insert: after(signingKeys.insert.bind(signingKeys), ([key]) => log('signing_key', key.kid)),
      retire: after(signingKeys.retire.bind(signingKeys), ([kid], retired) =>
        retired ? log('signing_key', kid) : undefined,
      ),
      withdraw: after(signingKeys.withdraw.bind(signingKeys), ([kid], withdrawn) =>
        withdrawn ? log('signing_key', kid) : undefined,
      ),
    },
    notBefore: {
      ...notBefore,
      // The instant in force rides in the key: every process applies it without reading it back.
      raise: after(notBefore.raise.bind(notBefore), (_args, inForce) =>
        log('not_before', `${inForce.notBefore.getTime()} ${inForce.scope}:${inForce.subject}`),
      ),
    },
    // Clusters and trusts are read on every token request and review (held whole in memory).
    clusters: {
      ...clusters,
      create: after(clusters.create.bind(clusters), ([cluster]) => log('cluster', cluster.name)),
      update: after(clusters.update.bind(clusters), ([name], updated) =>
        updated === undefined ? undefined : log('cluster', name.toLowerCase()),
      ),
      remove: after(clusters.remove.bind(clusters), ([name], removed) =>
        removed ? log('cluster', name.toLowerCase()) : undefined,
      ),
    },
    trusts: {
      ...trusts,
      create: after(trusts.create.bind(trusts), ([trust]) => log('trust', trust.name)),
      update: after(trusts.update.bind(trusts), ([trust], updated) =>
        updated === undefined ? undefined : log('trust', trust.name),
      ),
      remove: after(trusts.remove.bind(trusts), ([name], removed) =>
        removed ? log('trust', name.toLowerCase()) : undefined,
      ),
    },
    identityProviders: {
      ...identityProviders,
      create: after(identityProviders.create.bind(identityProviders), ([provider]) =>
        log('identity_provider', provider.name),
      ),
      setDisabled: after(identityProviders.setDisabled.bind(identityProviders), ([name]) =>
        log('identity_provider', name.toLowerCase()),
      ),
      update: after(identityProviders.update.bind(identityProviders), ([name], updated) =>
        updated === undefined ? undefined : log('identity_provider', name.toLowerCase()),
      ),
      remove: after(identityProviders.remove.bind(identityProviders), ([name], removed) =>
        removed ? log('identity_provider', name.toLowerCase()) : undefined,
      ),
    },
    identities: {
      ...identities,
      // A user's groups include those of their identities.
      link: after(identities.link.bind(identities), ([identity]) => log('user', identity.userId)),
      recordSignIn: after(identities.recordSignIn.bind(identities), async ([provider, subject]) => {
        const linked = await identities.find(provider, subject);
        if (linked !== undefined) await log('user', linked.userId);
      }),
      unlink: async (provider, subject) => {
        const linked = await identities.find(provider, subject);
        const unlinked = await identities.unlink(provider, subject);
        if (unlinked && linked !== undefined) await log('user', linked.userId);
        return unlinked;
      },
    },
    transaction: async <T>(work: (inner: SqlStorage) => Promise<T>): Promise<T> => {
      const pending: Array<[ChangeTopic, string]> = [];
      const result = await storage.transaction((inner) =>
        // A nested transaction joins the outer one, and so does its list of pending notices.
        work(wrap(inner, database, (topic, key) => pending.push([topic, key]), local)),
      );
      for (const [topic, key] of pending) notify(topic, key);
      return result;
    },
  };
}
