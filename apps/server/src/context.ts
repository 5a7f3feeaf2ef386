import {
  type AdminPorts,
  type AuditBatcher,
  type AuditEventIds,
  type Clock,
  createAuditBatcher,
  type KeyRing,
  LoginThrottle,
  type PasswordHasher,
  type PurgedRecords,
  type Random,
  refreshSuccessorKey,
  type Storage,
  type TokenEndpointContext,
} from '@idgate/core';
import { adminPorts } from './admin-ports.js';
import { startTokenReviewAudit, type TokenReviewAudit } from './audit/token-review-writer.js';
import { ChangeFeed } from './cache/change-feed.js';
import { Directory } from './cache/directory.js';
import type { IdgateConfig } from './config.js';
import { ProviderRegistry } from './federation/registry.js';
import { type PurgeJob, startPurgeJob } from './maintenance.js';
import { createMetrics, instrumentLoginAttempts, type Metrics } from './metrics.js';
import type { Services } from './services.js';
import { postgresTimeouts } from './storage/database.js';
import type { Database } from './storage/index.js';
import { tracedFetch, tracedLdapClients } from './telemetry/upstream-spans.js';

/**
 * Everything a running server is made of, built once by {@link createAppContext} and handed to
 * the routes as the `idgate` decorator: reading this interface tells what the routes may use.
 */
export interface AppContext {
  readonly config: IdgateConfig;
  readonly clock: Clock;
  /** This process's random source (see `Services.random`). */
  readonly random: Random;
  /** The ids of this process's audit events, which sort in the order they were made. */
  readonly auditIds: AuditEventIds;
  readonly hasher: PasswordHasher;
  /** A valid hash verified for unknown usernames, so they cost as long as a wrong password. */
  readonly dummyHash: string;
  /** The longest access or ID token lifetime (seconds): how long a revocation must be kept. */
  readonly maxTokenLifetimeSeconds: number;
  /** The secret that seals signing keys and identity provider secrets. */
  readonly secret: string;
  readonly database: Database;
  /** Storage whose hot reads (users, clients, API keys, revocations) come from the directory's memory. */
  readonly storage: Storage;
  readonly directory: Directory;
  /** The identity providers of the file and the database, with their connectors. */
  readonly providers: ProviderRegistry;
  readonly metrics: Metrics;
  /** What the administrative use cases run over (authoritative reads: not the directory's memory). */
  readonly admin: AdminPorts;
  /** Brute-force protection of every password sign-in, shared by the login page and the password grant. */
  readonly throttle: LoginThrottle;
  /** The token endpoint's concurrent-refresh window (`tokens.refreshReuseWindow`) and its key. */
  readonly refreshReuse: NonNullable<TokenEndpointContext['refreshReuse']>;
  /** The audit writers of the paths that write nothing else per request. */
  readonly audit: AuditWriters;
  /** The key ring in force now. */
  keys(): KeyRing;
  /** Reloads the key ring from storage (after this process rotated the keys). */
  reloadKeys(): Promise<unknown>;
}

/** Audit events written apart from any change: TokenReview decisions and client_credentials tokens. */
export interface AuditWriters {
  /** `token-review.decided` (`audit.tokenReview`), held in memory and written in the background. */
  readonly tokenReviews: TokenReviewAudit;
  /** `token.issued` of client_credentials, group-committed; each issuance awaits its batch. */
  readonly issuedTokens: AuditBatcher;
  /** Writes the TokenReview events recorded so far (the interval's work, at once; for tests and shutdown). */
  flush(): Promise<void>;
}

/** A context and how to stop what it started. */
export interface RunningContext {
  readonly context: AppContext;
  /** The periodic purge of expired records (`maintenance.purgeInterval`). */
  readonly purge: PurgeJob;
  /** Stops following changes and purging (the services stay open: their owner closes them). */
  stop(): Promise<void>;
}

export interface AppContextOptions {
  /** Where the change feed reports a failed read (it retries on its own). */
  onFeedError?: (error: unknown, what: string) => void;
  /** Where the purge job reports what it deleted, or a round that failed (the next one retries). */
  onPurge?: (counts: PurgedRecords | undefined, error?: unknown) => void;
  /** Told once when writing TokenReview audit events starts failing (they are kept and retried)… */
  onAuditWriteFailed?: (error: unknown) => void;
  /** …and once when it works again. */
  onAuditWriteRecovered?: () => void;
}

/**
 * Builds the application context over open services: the directory (memory of the hot reads,
 * following this process's changes and, through the change feed, every other process's), the
 * identity provider registry, the metrics and the login throttle.
 */
export async function createAppContext(
  services: Services,
  options: AppContextOptions = {},
): Promise<RunningContext> {
  const { config, database } = services;
  const feed = new ChangeFeed(database, {
    ...(database.dialect === 'postgres'
      ? { listenUrl: config.database.url, listenOptions: postgresTimeouts(config.database) }
      : {}),
    ...(options.onFeedError === undefined ? {} : { onError: options.onFeedError }),
  });
  const directory = new Directory({
    storage: services.storage,
    issuer: config.issuer,
    clock: services.clock,
    keys: () => services.keys(),
    reloadKeys: () => services.reloadKeys(),
    maxTokenLifetimeSeconds: services.keyPolicy.maxTokenLifetimeSeconds,
    maxStalenessSeconds: config.cache.maxStaleness,
    storageAvailable: () => database.health.available,
  });
  try {
    await directory.start(services.changes, feed);
    await feed.start();
  } catch (error) {
    await feed.stop();
    throw error;
  }
  const metrics = createMetrics(database);
  const storage = directory.storage;
  const tokenReviews = startTokenReviewAudit({
    settings: config.audit,
    clock: services.clock,
    ids: services.auditIds,
    auditEvents: storage.auditEvents,
    ...(options.onAuditWriteFailed === undefined ? {} : { onWriteFailed: options.onAuditWriteFailed }),
    ...(options.onAuditWriteRecovered === undefined
      ? {}
      : { onWriteRecovered: options.onAuditWriteRecovered }),
  });
  const context: AppContext = {
    config,
    clock: services.clock,
    random: services.random,
    auditIds: services.auditIds,
    hasher: services.hasher,
    dummyHash: services.dummyHash,
    maxTokenLifetimeSeconds: services.keyPolicy.maxTokenLifetimeSeconds,
    secret: services.keyPolicy.secret,
    database,
    storage,
    directory,
    providers: new ProviderRegistry({
      declared: config.identityProviders,
      stored: storage.identityProviders,
      secret: services.keyPolicy.secret,
      ...(services.tracing === undefined
        ? {}
        : {
            connectors: {
              fetch: tracedFetch(services.tracing),
              ldapClientFactory: tracedLdapClients(services.tracing),
            },
          }),
    }),
    metrics,
    // Acted by `system`; an admin request acts through `request.admin`, with its API key.
    admin: adminPorts(services),
    throttle: new LoginThrottle(
      instrumentLoginAttempts(storage.loginAttempts, metrics),
      config.bruteForce,
      services.clock,
    ),
    refreshReuse: {
      windowSeconds: config.tokens.refreshReuseWindow,
      successorKey: await refreshSuccessorKey(services.keyPolicy.secret),
    },
    audit: {
      tokenReviews,
      issuedTokens: createAuditBatcher(storage, { schedule: setImmediate }),
      flush: () => tokenReviews.flush(),
    },
    keys: () => services.keys(),
    reloadKeys: () => services.reloadKeys(),
  };
  const purged = options.onPurge ?? (() => {});
  const purge = startPurgeJob(
    services,
    config.maintenance.purgeInterval,
    {
      purged: (counts) => purged(counts),
      failed: (error) => purged(undefined, error),
    },
    config.audit.retention,
  );
  return {
    context,
    purge,
    stop: async () => {
      purge.stop();
      // The last interval's TokenReview events, before the database closes.
      await tokenReviews.stop();
      await feed.stop();
    },
  };
}
