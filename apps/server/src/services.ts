import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  type AuditEventIds,
  type Clock,
  createAuditEventIds,
  ensureSigningKey,
  KeyRing,
  type PasswordHasher,
  pooledRandom,
  type Random,
  type SigningKeyPolicy,
  systemClock,
} from '@idgate/core';
import { createAuditChainWriter } from './audit/chain.js';
import { type AuditLogSink, openAuditLog } from './audit/json-lines.js';
import { personalDataFilter } from './audit/personal-data.js';
import { LocalChanges, recordChanges } from './cache/change-log.js';
import type { IdgateConfig } from './config.js';
import { nodeJws } from './crypto/node-jws.js';
import { argon2idHasher } from './password-hasher.js';
import {
  createSqlStorage,
  type Database,
  migrateToLatest,
  openDatabase,
  type SqlStorage,
} from './storage/index.js';
import { withSigningKeyLock } from './storage/locks.js';
import { tracedSigning } from './telemetry/signing-spans.js';
import type { Tracing } from './telemetry/tracing.js';

/** Where warnings at start go (pino, or the CLI's stderr). */
export interface StartupLogger {
  warn(message: string): void;
  info(message: string): void;
}

/** Everything the routes and the CLI share: storage, keys, hashing, time. */
export interface Services {
  readonly config: IdgateConfig;
  readonly database: Database;
  /** Storage that records every change other processes may cache (see `recordChanges`). */
  readonly storage: SqlStorage;
  /** This process's own committed changes, for its caches. */
  readonly changes: LocalChanges;
  readonly hasher: PasswordHasher;
  readonly clock: Clock;
  /** This process's random source: Web Crypto through a pool of its own. */
  readonly random: Random;
  /** The ids of this process's audit events, which sort in the order they were made. */
  readonly auditIds: AuditEventIds;
  readonly keyPolicy: SigningKeyPolicy;
  /** OpenTelemetry tracing, when configured: statements, signatures and upstream calls make spans. */
  readonly tracing: Tracing | undefined;
  /** The JSON-lines stream of committed audit events (`audit.log`), when one is configured. */
  readonly auditLog: AuditLogSink | undefined;
  /** The key ring in force now. */
  keys(): KeyRing;
  /** Reloads keys from storage (after a rotation, possibly by another process). */
  reloadKeys(): Promise<KeyRing>;
  close(): Promise<void>;
}

/** The folder the embedded database lives in, where a generated secret is kept too. */
export function dataDirectory(databaseUrl: string): string {
  const file = databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : '';
  return file === '' || file === ':memory:' ? resolve('data') : dirname(resolve(file));
}

/**
 * The secret that seals signing keys: configured, read from a file, or generated into
 * `<data>/secret` on first start with a warning (fine for one SQLite server; replicas must share
 * a configured one).
 */
export function resolveSecret(config: IdgateConfig, logger: StartupLogger): string {
  if (config.secret !== undefined) return config.secret;
  const file = config.secretFile ?? resolve(dataDirectory(config.database.url), 'secret');
  if (existsSync(file)) {
    const secret = readFileSync(file, 'utf8').trim();
    if (secret.length < 32) throw new Error(`the secret in ${file} must be at least 32 characters`);
    return secret;
  }
  if (config.secretFile !== undefined) throw new Error(`secretFile ${file} does not exist`);
  if (!config.database.url.startsWith('sqlite:')) {
    // Every replica and every CLI run must seal and open keys with the same secret; a file
    // generated next to one process would differ from the next one's.
    throw new Error('a shared database needs a configured secret: set IDGATE_SECRET or IDGATE_SECRET_FILE');
  }
  mkdirSync(dirname(file), { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  logger.warn(
    `no secret configured: generated one in ${file}. Back it up; signing keys cannot be decrypted without it. ` +
      'Replicas that share a database must share one secret: set IDGATE_SECRET or IDGATE_SECRET_FILE.',
  );
  return secret;
}

/** How long a migration's statements may run (s): longer than any request's timeout. */
const MIGRATION_TIMEOUT_SECONDS = 3600;

/**
 * Applies pending PostgreSQL migrations over a connection of their own whose statement and query
 * timeouts are an hour, not the request timeouts (an index built over a large table takes longer
 * than a request may).
 */
async function migratePostgres(config: IdgateConfig): Promise<string[]> {
  const database = await openDatabase(config.database.url, {
    ...config.database,
    poolMax: 2,
    statementTimeout: MIGRATION_TIMEOUT_SECONDS,
    queryTimeout: MIGRATION_TIMEOUT_SECONDS,
    idleInTransactionTimeout: MIGRATION_TIMEOUT_SECONDS,
  });
  try {
    return (await migrateToLatest(database)).applied;
  } finally {
    await database.close();
  }
}

/**
 * Opens the database, applies pending migrations, makes sure a signing key exists and loads the
 * key ring.
 * @throws DatabaseNotFoundError with `existing` when the database is missing or holds no idgate tables.
 */
export async function openServices(
  config: IdgateConfig,
  options: {
    logger: StartupLogger;
    hasher?: PasswordHasher;
    clock?: Clock;
    /** Open only a database idgate already set up: create no file, secret or key for a missing one. */
    existing?: boolean;
    tracing?: Tracing | undefined;
    /** Watch PostgreSQL with a heartbeat (`database.heartbeatTimeout`): a server, not a CLI run. */
    heartbeat?: boolean;
  },
): Promise<Services> {
  const database = await openDatabase(config.database.url, {
    ...config.database,
    existing: options.existing === true,
    tracer: options.tracing?.tracer,
    heartbeat: options.heartbeat === true ? { timeout: config.database.heartbeatTimeout } : undefined,
  });
  let auditLog: AuditLogSink | undefined;
  try {
    const applied =
      database.dialect === 'postgres'
        ? await migratePostgres(config)
        : (await migrateToLatest(database)).applied;
    if (applied.length > 0) options.logger.info(`applied migrations: ${applied.join(', ')}`);
    const changes = new LocalChanges();
    const secret = resolveSecret(config, options.logger);
    auditLog = openAuditLog(config.audit.log);
    const sink = auditLog;
    const clock = options.clock ?? systemClock;
    const random = pooledRandom();
    // This process's chain of audit events, under an id of its own (see audit/chain.ts).
    const writerIds = createAuditEventIds(random);
    const storage = recordChanges(
      createSqlStorage(database, {
        prepare: personalDataFilter(config.audit.personalData, secret),
        chain: createAuditChainWriter(() => writerIds(clock.now())),
        committed: (events) => {
          try {
            sink?.write(events);
          } catch (error) {
            // The change is committed: the stream losing a line must not fail the request.
            options.logger.warn(`could not write audit events to ${config.audit.log}: ${String(error)}`);
          }
        },
      }),
      database,
      changes,
    );
    const hasher = options.hasher ?? argon2idHasher();
    const keyPolicy: SigningKeyPolicy = {
      alg: config.signing.algorithm,
      secret,
      maxTokenLifetimeSeconds: Math.max(config.tokens.maxAccessTokenTtl, config.tokens.idTokenTtl),
      activationDelaySeconds: config.signing.activationDelay,
    };
    let reload: NodeJS.Timeout | undefined;
    const loadKeys = async (): Promise<KeyRing> => {
      let records = await storage.signingKeys.list();
      if (!records.some((key) => key.retiredAt === null)) {
        records = await withSigningKeyLock(storage, database, (tx) =>
          ensureSigningKey(tx.signingKeys, keyPolicy, new Date(clock.now())),
        );
      }
      const loaded = await KeyRing.load(records, keyPolicy.secret, new Date(clock.now()), {
        ...keyPolicy,
        jwsCrypto: options.tracing === undefined ? nodeJws : tracedSigning(nodeJws, options.tracing),
      });
      // Reload when a key starts signing, retires or leaves JWKS, whatever else happens.
      clearTimeout(reload);
      if (loaded.nextChangeAt !== undefined) {
        const wait = Math.min(loaded.nextChangeAt.getTime() - clock.now() + 50, 2_147_483_647);
        reload = setTimeout(
          () => {
            refreshKeys().catch((error: unknown) =>
              options.logger.warn(`could not reload signing keys: ${String(error)}`),
            );
          },
          Math.max(wait, 0),
        );
        reload.unref();
      }
      return loaded;
    };
    let ring = await loadKeys();
    // Reloads overlap (the timer, the change feed, an admin rotation): only the one started last
    // sets the ring, so a load that read the keys or the clock before a change cannot undo it.
    let latest: Promise<KeyRing> | undefined;
    const refreshKeys = (): Promise<KeyRing> => {
      const load: Promise<KeyRing> = loadKeys().then((loaded) => {
        if (latest !== load) return latest ?? loaded;
        ring = loaded;
        return loaded;
      });
      latest = load;
      return load;
    };
    return {
      config,
      database,
      storage,
      changes,
      hasher,
      clock,
      random,
      auditIds: createAuditEventIds(random),
      keyPolicy,
      tracing: options.tracing,
      auditLog,
      keys: () => ring,
      reloadKeys: refreshKeys,
      close: () => {
        clearTimeout(reload);
        auditLog?.close();
        return storage.close();
      },
    };
  } catch (error) {
    auditLog?.close();
    await database.close();
    throw error;
  }
}
