import type { Storage } from '@idgate/core';
import type { Kysely } from 'kysely';
import type { Database } from './database.js';
import { createApiKeyRepository } from './repositories/api-keys.js';
import { createAuditEventRepository } from './repositories/audit-events.js';
import { createAuthorizationCodeRepository } from './repositories/authorization-codes.js';
import { createClientRepository } from './repositories/clients.js';
import { createClusterRepository } from './repositories/clusters.js';
import { createConsentRepository } from './repositories/consents.js';
import { createDeviceAuthorizationRepository } from './repositories/device-authorizations.js';
import { createGrantRepository } from './repositories/grants.js';
import { createIdentityProviderRepository } from './repositories/identity-providers.js';
import { createInteractionRepository } from './repositories/interactions.js';
import { createLinkedIdentityRepository } from './repositories/linked-identities.js';
import { createLoginAttemptRepository } from './repositories/login-attempts.js';
import { createLoginTransactionRepository } from './repositories/login-transactions.js';
import { createRefreshTokenRepository } from './repositories/refresh-tokens.js';
import { createRevocationRepository } from './repositories/revocations.js';
import { createBrowserSessionRepository } from './repositories/sessions.js';
import { createSigningKeyRepository } from './repositories/signing-keys.js';
import type { RepositoryContext } from './repositories/support.js';
import { createUserRepository } from './repositories/users.js';
import type { Schema } from './schema.js';

/**
 * The `Storage` port over SQL, with the Kysely handle it writes through: the database's, or inside
 * `transaction(work)` the transaction's, so that companions (the change log, advisory locks) write
 * in the same transaction as the repositories.
 */
export interface SqlStorage extends Storage {
  readonly db: Kysely<Schema>;
  transaction<T>(work: (storage: SqlStorage) => Promise<T>): Promise<T>;
}

/**
 * The `Storage` port over an open SQL database (already migrated; see `migrateToLatest`).
 *
 * Inside `transaction(work)`, use only the storage handed to `work`: on SQLite the one connection is
 * held by the transaction, so a query through the outer storage would wait for it forever.
 */
export function createSqlStorage(database: Database): SqlStorage {
  return bind(database, database.db, false);
}

function bind(database: Database, db: Kysely<Schema>, inTransaction: boolean): SqlStorage {
  const ctx: RepositoryContext = { db, dialect: database.dialect, inTransaction };
  const storage: SqlStorage = {
    db,
    users: createUserRepository(ctx),
    clients: createClientRepository(ctx),
    apiKeys: createApiKeyRepository(ctx),
    signingKeys: createSigningKeyRepository(ctx),
    revocations: createRevocationRepository(ctx),
    grants: createGrantRepository(ctx),
    authorizationCodes: createAuthorizationCodeRepository(ctx),
    refreshTokens: createRefreshTokenRepository(ctx),
    sessions: createBrowserSessionRepository(ctx),
    consents: createConsentRepository(ctx),
    interactions: createInteractionRepository(ctx),
    deviceAuthorizations: createDeviceAuthorizationRepository(ctx),
    loginAttempts: createLoginAttemptRepository(ctx),
    identityProviders: createIdentityProviderRepository(ctx),
    identities: createLinkedIdentityRepository(ctx),
    loginTransactions: createLoginTransactionRepository(ctx),
    clusters: createClusterRepository(ctx),
    auditEvents: createAuditEventRepository(ctx),

    transaction<T>(work: (storage: SqlStorage) => Promise<T>): Promise<T> {
      // Nested calls join the open transaction: all-or-nothing is then decided by the outermost one.
      if (inTransaction) return work(storage);
      return db.transaction().execute((trx) => work(bind(database, trx, true)));
    },

    close(): Promise<void> {
      // Closing from inside a transaction would pull the connection from under it.
      if (inTransaction)
        return Promise.reject(new Error('Cannot close the database from inside a transaction'));
      return database.close();
    },
  };
  return storage;
}
