import type { IdentityProviderRecord, LinkedIdentityRecord, LoginTransactionRecord } from '../model.js';
import { type Storage, StorageConflictError } from './storage.js';

/** The federation tables, part of the in-memory storage's state (and of its snapshots). */
export interface FederationTables {
  /** Keyed by the lower-cased name. */
  identityProviders: Map<string, IdentityProviderRecord>;
  /** Keyed by `identityKey(provider, subject)`. */
  linkedIdentities: Map<string, LinkedIdentityRecord>;
  /** Keyed by the state hash. */
  loginTransactions: Map<string, LoginTransactionRecord>;
}

export type FederationRepositories = Pick<Storage, 'identityProviders' | 'identities' | 'loginTransactions'>;

export function emptyFederationTables(): FederationTables {
  return { identityProviders: new Map(), linkedIdentities: new Map(), loginTransactions: new Map() };
}

const copy = <T>(value: T): T => structuredClone(value);
// JSON of the pair, so no provider / subject combination can collide with another.
const identityKey = (provider: string, subject: string) => JSON.stringify([provider, subject]);
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The federation repositories over `tables()`, read on every call because a rolled-back
 * transaction replaces the tables with a snapshot. No method awaits between reading and writing,
 * which is what makes `consume` atomic here.
 */
export function createMemoryFederationRepositories(tables: () => FederationTables): FederationRepositories {
  return {
    identityProviders: {
      async create(provider) {
        const name = provider.name.toLowerCase();
        const { identityProviders } = tables();
        if (identityProviders.has(name)) throw new StorageConflictError('name');
        const record: IdentityProviderRecord = { ...copy(provider), name };
        identityProviders.set(name, record);
        return copy(record);
      },
      async findByName(name) {
        return copy(tables().identityProviders.get(name.toLowerCase()));
      },
      async list() {
        return copy([...tables().identityProviders.values()].sort((a, b) => compare(a.name, b.name)));
      },
      async setDisabled(name, disabled, at) {
        const provider = tables().identityProviders.get(name.toLowerCase());
        if (provider === undefined) return undefined;
        provider.disabled = disabled;
        provider.updatedAt = new Date(at);
        return copy(provider);
      },
      async update(name, changes) {
        const provider = tables().identityProviders.get(name.toLowerCase());
        if (provider === undefined) return undefined;
        provider.config = copy(changes.config);
        provider.disabled = changes.disabled;
        provider.updatedAt = new Date(changes.updatedAt);
        return copy(provider);
      },
      async remove(name) {
        const { identityProviders, linkedIdentities } = tables();
        const folded = name.toLowerCase();
        if (!identityProviders.delete(folded)) return false;
        for (const [key, identity] of linkedIdentities) {
          if (identity.provider === folded) linkedIdentities.delete(key);
        }
        return true;
      },
    },
    identities: {
      async link(identity) {
        const key = identityKey(identity.provider, identity.subject);
        const { linkedIdentities } = tables();
        if (linkedIdentities.has(key)) throw new StorageConflictError('subject');
        // `emailVerified` only when true, as the databases answer it.
        const { emailVerified, ...rest } = identity;
        const stored = emailVerified === true ? { ...rest, emailVerified } : rest;
        linkedIdentities.set(key, copy(stored));
        return copy(stored);
      },
      async find(provider, subject) {
        return copy(tables().linkedIdentities.get(identityKey(provider, subject)));
      },
      async listByUser(userId) {
        const mine = [...tables().linkedIdentities.values()].filter((i) => i.userId === userId);
        return copy(mine.sort((a, b) => compare(a.provider, b.provider) || compare(a.subject, b.subject)));
      },
      async countByProvider(provider) {
        return [...tables().linkedIdentities.values()].filter((i) => i.provider === provider).length;
      },
      async recordSignIn(provider, subject, fields) {
        const identity = tables().linkedIdentities.get(identityKey(provider, subject));
        if (identity === undefined) return;
        identity.username = fields.username;
        identity.email = fields.email;
        if (fields.emailVerified === true) identity.emailVerified = true;
        else delete identity.emailVerified;
        identity.groups = [...fields.groups];
        identity.lastLoginAt = new Date(fields.at);
      },
      async unlink(provider, subject) {
        return tables().linkedIdentities.delete(identityKey(provider, subject));
      },
    },
    loginTransactions: {
      async create(transaction) {
        const { loginTransactions } = tables();
        if (loginTransactions.has(transaction.stateHash)) throw new StorageConflictError('stateHash');
        loginTransactions.set(transaction.stateHash, copy(transaction));
      },
      async find(stateHash) {
        return copy(tables().loginTransactions.get(stateHash));
      },
      async consume(stateHash, at) {
        const transaction = tables().loginTransactions.get(stateHash);
        if (transaction === undefined) return { status: 'unknown' };
        if (transaction.consumedAt !== null) return { status: 'replayed', transaction: copy(transaction) };
        transaction.consumedAt = new Date(at);
        return { status: 'consumed', transaction: copy(transaction) };
      },
      async purgeExpired(now) {
        let purged = 0;
        for (const [key, transaction] of tables().loginTransactions) {
          if (transaction.expiresAt.getTime() < now.getTime()) {
            tables().loginTransactions.delete(key);
            purged++;
          }
        }
        return purged;
      },
    },
  };
}
