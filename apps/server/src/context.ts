import {
  type ApiKeyRecord,
  type Clock,
  createIdgate,
  type Idgate,
  type IdgatePolicy,
  type KeyRing,
  type PurgedRecords,
  type Storage,
} from '@idgate/core';
import type { AdminPorts } from '@idgate/core/admin';
import { actingAdminPorts, adminPorts } from './admin-ports.js';
import { startTokenReviewAudit, type TokenReviewAudit } from './audit/token-review-writer.js';
import { ChangeFeed } from './cache/change-feed.js';
import { Directory } from './cache/directory.js';
import type { IdgateConfig } from './config.js';
import { offloadedEcJws } from './crypto/node-jws.js';
import { ProviderRegistry } from './federation/registry.js';
import { type PurgeJob, startPurgeJob } from './maintenance.js';
import type { Services } from './services.js';
import { postgresTimeouts } from './storage/database.js';
import type { Database } from './storage/index.js';
import { createMetrics, instrumentLoginAttempts, type Metrics } from './telemetry/metrics.js';
import { tracedFetch, tracedLdapClients } from './telemetry/upstream-spans.js';

/**
 * Everything a running server is made of, built once by {@link createAppContext} and handed to
 * the routes as the `idgate` decorator: reading this interface tells what the routes may use.
 */
export interface AppContext {
  readonly config: IdgateConfig;
  /** idgate's logic, built once over the ports below: what the routes drive. */
  readonly core: Idgate;
  readonly clock: Clock;
  readonly database: Database;
  /**
   * The one door to state: storage whose hot reads (users, clients, API keys, revocations) come
   * from the directory's memory, the same storage `core` runs over.
   */
  readonly storage: Storage;
  /** The identity providers of the file and the database, with their connectors. */
  readonly providers: ProviderRegistry;
  readonly metrics: Metrics;
  /**
   * What the administrative use cases run over: authoritative reads (not the directory's memory),
   * acted by `system`; an admin request acts through `request.admin`, with its API key.
   */
  readonly admin: AdminPorts;
  /** {@link admin} acting for an API key (the actor of every change), built once per key. */
  adminActingFor(key: Pick<ApiKeyRecord, 'id' | 'prefix' | 'scopes'>): AdminPorts;
  /** The audit writers of the paths that write nothing else per request. */
  readonly audit: AuditWriters;
  /** The key ring in force now. */
  keys(): KeyRing;
  /** Reloads the key ring from storage (after this process rotated the keys). */
  reloadKeys(): Promise<unknown>;
}

/** Audit events written apart from any change: TokenReview decisions. */
export interface AuditWriters {
  /** `token-review.decided` (`audit.tokenReview`), held in memory and written in the background. */
  readonly tokenReviews: TokenReviewAudit;
  /** Writes the TokenReview events recorded so far (the interval's work, at once; for tests and shutdown). */
  flush(): Promise<void>;
}

/** A context and how to stop what it started. */
export interface RunningContext {
  readonly context: AppContext;
  /** The memory behind `context.storage` and core's reads (see {@link Directory}). */
  readonly directory: Directory;
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
    clock: services.clock,
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
  const providers = new ProviderRegistry({
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
  });
  const core = await createIdgate(
    {
      storage,
      hasher: services.hasher,
      keys: () => services.keys(),
      providers,
      clock: services.clock,
      random: services.random,
      auditIds: services.auditIds,
      cache: directory,
      loginAttempts: instrumentLoginAttempts(storage.loginAttempts, metrics),
      schedule: setImmediate,
      // Loaded on the first passkey ceremony, not at start.
      webauthn: () => import('@simplewebauthn/server'),
      // Subject tokens verified by node:crypto, ES256 on the thread pool: +15 % exchanges/s over in-line.
      jwsCrypto: offloadedEcJws,
    },
    corePolicy(config, services),
  );
  const admin = adminPorts(services);
  const context: AppContext = {
    config,
    core,
    clock: services.clock,
    database,
    storage,
    providers,
    metrics,
    admin,
    adminActingFor: actingAdminPorts(admin),
    audit: { tokenReviews, flush: () => tokenReviews.flush() },
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
    directory,
    purge,
    stop: async () => {
      purge.stop();
      // The last interval's TokenReview events, before the database closes.
      await tokenReviews.stop();
      await feed.stop();
    },
  };
}

/** The settings core decides with, from the server's configuration. */
function corePolicy(config: IdgateConfig, services: Services): IdgatePolicy {
  return {
    issuer: config.issuer,
    keyPolicy: services.keyPolicy,
    tokens: config.tokens,
    device: config.device,
    revalidateInterval: config.federation.revalidateInterval,
    revalidateMaxStaleness: config.federation.revalidateMaxStaleness,
    pkce: config.pkce,
    loginThrottle: config.bruteForce,
    passwordPolicy: config.passwordPolicy,
    declaredProviders: config.identityProviders,
    productName: config.ui.productName,
  };
}
