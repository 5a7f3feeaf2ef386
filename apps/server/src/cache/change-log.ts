import type { Storage } from '@idgate/core';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../storage/index.js';
import type { Schema } from '../storage/schema.js';

/** What a change is about; the key names the thing (user id, client id, key prefix, ...). */
export type ChangeTopic = 'user' | 'client' | 'api_key' | 'revocation' | 'signing_key' | 'identity_provider';

/** The PostgreSQL channel every replica listens on. */
export const CHANGE_CHANNEL = 'idgate_changes';

async function append(
  db: Kysely<Schema>,
  dialect: Database['dialect'],
  topic: ChangeTopic,
  key: string,
): Promise<void> {
  await db.insertInto('change_log').values({ topic, key, created_at: Date.now() }).execute();
  // Delivered when the transaction commits, so a listener never reads ahead of the write.
  if (dialect === 'postgres') await sql`select pg_notify(${CHANGE_CHANNEL}, ${topic})`.execute(db);
}

const localListeners = new WeakMap<Database, Set<(topic: ChangeTopic, key: string) => void>>();

/**
 * Hears this process's own changes as they are written: its caches must not wait for the change
 * feed to see what it did itself.
 */
export function onLocalChange(database: Database, listener: (topic: ChangeTopic, key: string) => void): void {
  let listeners = localListeners.get(database);
  if (listeners === undefined) {
    listeners = new Set();
    localListeners.set(database, listeners);
  }
  listeners.add(listener);
}

/**
 * Wraps a storage so that every write another server may hold in memory also appends a change
 * row, in the same transaction as the write. Applied to every process's storage, the CLI's
 * included, so `idgate users disable` reaches running servers too.
 */
export function recordChanges(
  storage: Storage,
  database: Database,
  db: Kysely<Schema> = database.db,
): Storage {
  const log = async (topic: ChangeTopic, key: string) => {
    await append(db, database.dialect, topic, key);
    for (const listener of localListeners.get(database) ?? []) listener(topic, key);
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
  const { users, clients, apiKeys, revocations, signingKeys, identityProviders, identities } = storage;
  const wrapped: Storage = {
    ...storage,
    users: {
      ...users,
      update: after(users.update.bind(users), ([id], updated) =>
        updated === undefined ? undefined : log('user', id),
      ),
    },
    clients: {
      ...clients,
      create: after(clients.create.bind(clients), ([client]) => log('client', client.clientId)),
      remove: after(clients.remove.bind(clients), ([clientId], removed) =>
        removed ? log('client', clientId) : undefined,
      ),
    },
    apiKeys: {
      ...apiKeys,
      revoke: after(apiKeys.revoke.bind(apiKeys), ([idOrPrefix], revoked) =>
        revoked ? log('api_key', idOrPrefix) : undefined,
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
    },
    identityProviders: {
      ...identityProviders,
      create: after(identityProviders.create.bind(identityProviders), ([provider]) =>
        log('identity_provider', provider.name),
      ),
      setDisabled: after(identityProviders.setDisabled.bind(identityProviders), ([name]) =>
        log('identity_provider', name.toLowerCase()),
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
    transaction: <T>(work: (inner: Storage) => Promise<T>) =>
      storage.transaction((inner) => work(recordChanges(inner, database, innerDb(inner) ?? db))),
  };
  Object.defineProperty(wrapped, TRANSACTION_DB, { value: db });
  return wrapped;
}

// The SQL storage of a transaction carries its Kysely transaction, so the change rows land in it.
const TRANSACTION_DB = Symbol.for('idgate.storage.db');
function innerDb(storage: Storage): Kysely<Schema> | undefined {
  return (storage as unknown as Record<symbol, Kysely<Schema> | undefined>)[TRANSACTION_DB];
}
