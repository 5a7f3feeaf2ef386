import { type AuditEventRepository, createAuditEventIds, type Storage } from '@idgate/core';
import type { AuditEvent } from '@idgate/schema';
import type { Kysely } from 'kysely';
import { type AuditChainWriter, createAuditChainWriter, type PendingLinks } from '../audit/chain.js';
import type { Database } from './database.js';
import { createApiKeyRepository } from './repositories/api-keys.js';
import { createAuditEventRepository, insertAuditRows, toAuditRow } from './repositories/audit-events.js';
import { createAuthorizationCodeRepository } from './repositories/authorization-codes.js';
import { createClientRepository } from './repositories/clients.js';
import { createClusterRepository } from './repositories/clusters.js';
import { createConsentRepository } from './repositories/consents.js';
import { createDeclaredObjectRepository } from './repositories/declared-objects.js';
import { createDeviceAuthorizationRepository } from './repositories/device-authorizations.js';
import { createFactorRepository } from './repositories/factors.js';
import { createGrantRepository } from './repositories/grants.js';
import { createGroupRepository } from './repositories/groups.js';
import { createIdentityProviderRepository } from './repositories/identity-providers.js';
import { createInteractionRepository } from './repositories/interactions.js';
import { createLinkedIdentityRepository } from './repositories/linked-identities.js';
import { createLoginAttemptRepository } from './repositories/login-attempts.js';
import { createLoginTransactionRepository } from './repositories/login-transactions.js';
import { createNotBeforeRepository } from './repositories/not-before.js';
import { createRefreshTokenRepository } from './repositories/refresh-tokens.js';
import { createRevocationRepository } from './repositories/revocations.js';
import { createBrowserSessionRepository } from './repositories/sessions.js';
import { createSigningKeyRepository } from './repositories/signing-keys.js';
import type { RepositoryContext } from './repositories/support.js';
import { createSubjectTokenUseRepository, createTrustRepository } from './repositories/trusts.js';
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
export function createSqlStorage(database: Database, audit: AuditPolicy = {}): SqlStorage {
  const chain = audit.chain ?? createAuditChainWriter(() => createAuditEventIds()(Date.now()));
  return bind(database, database.db, undefined, { ...audit, chain });
}

/**
 * What happens to audit events around storage, in this one place: `prepare` turns each batch into
 * what is stored (personal data hashed or dropped), `chain` links what is stored into this
 * process's tamper-evident chain as its transaction commits, and `committed` hears the stored
 * events once that transaction has committed (never for one that rolled back).
 */
export interface AuditPolicy {
  prepare?: (events: readonly AuditEvent[]) => AuditEvent[];
  committed?: (events: readonly AuditEvent[]) => void;
  /** The process's chain writer (default: one of this storage's own, ids made at random). */
  chain?: AuditChainWriter;
}

interface ChainedAudit extends AuditPolicy {
  chain: AuditChainWriter;
}

// In a transaction, events wait in `pending` and are linked and inserted as its last statements
// (see `transaction`): the chain's turn is then held only from that insert to the commit.
// Outside one, an append is a transaction of its own.
function auditRepository(
  inner: AuditEventRepository,
  audit: ChainedAudit,
  pending: AuditEvent[] | undefined,
  transaction: SqlStorage['transaction'],
): AuditEventRepository {
  return {
    ...inner,
    async append(events) {
      if (events.length === 0) return;
      if (pending === undefined) return transaction((tx) => tx.auditEvents.append(events));
      pending.push(...(audit.prepare === undefined ? events : audit.prepare(events)));
    },
  };
}

function bind(
  database: Database,
  db: Kysely<Schema>,
  pending: AuditEvent[] | undefined,
  audit: ChainedAudit,
): SqlStorage {
  const inTransaction = pending !== undefined;
  const ctx: RepositoryContext = { db, dialect: database.dialect, inTransaction };
  const events = createAuditEventRepository(ctx);
  const storage: SqlStorage = {
    db,
    users: createUserRepository(ctx),
    groups: createGroupRepository(ctx),
    clients: createClientRepository(ctx),
    apiKeys: createApiKeyRepository(ctx),
    signingKeys: createSigningKeyRepository(ctx),
    revocations: createRevocationRepository(ctx),
    notBefore: createNotBeforeRepository(ctx),
    declaredObjects: createDeclaredObjectRepository(ctx),
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
    trusts: createTrustRepository(ctx),
    subjectTokenUses: createSubjectTokenUseRepository(ctx),
    factors: createFactorRepository(ctx),
    auditEvents: auditRepository(events, audit, pending, (work) => storage.transaction(work)),

    transaction<T>(work: (storage: SqlStorage) => Promise<T>): Promise<T> {
      // Nested calls join the open transaction: all-or-nothing is then decided by the outermost one.
      if (inTransaction) return work(storage);
      const appended: AuditEvent[] = [];
      let links: PendingLinks | undefined;
      return db
        .transaction()
        .execute(async (trx) => {
          const result = await work(bind(database, trx, appended, audit));
          if (appended.length > 0) {
            links = await audit.chain.link(appended.map(toAuditRow));
            await insertAuditRows({ db: trx, dialect: database.dialect, inTransaction: true }, links.rows);
          }
          return result;
        })
        .then(
          (result) => {
            links?.committed();
            if (appended.length > 0) audit.committed?.(appended);
            return result;
          },
          (error: unknown) => {
            links?.failed();
            throw error;
          },
        );
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
