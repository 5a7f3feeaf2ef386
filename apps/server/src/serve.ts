import { type Clock, StorageUnavailableError } from '@idgate/core';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Directory } from './cache/directory.js';
import type { IdgateConfig } from './config.js';
import { type AppContext, createAppContext } from './context.js';
import { appliedSummary, applyDeclaredPath } from './declarations.js';
import { startIdleCompaction } from './idle-compaction.js';
import { openServices, type Services } from './services.js';
import { storageUnavailability } from './storage/unavailable.js';
import { startTracing, tracesUrl } from './telemetry/tracing.js';

/** A composed server: services open, context built, every route registered, not listening. */
export interface ComposedServer {
  app: FastifyInstance;
  services: Services;
  /** What the routes work with. */
  context: AppContext;
  /** The memory behind the context's storage (an operator's or a test's handle: `resync()`). */
  directory: Directory;
  /** Closes the app (finishing in-flight requests), stops the context, closes the database. */
  close(): Promise<void>;
}

/** A running server. */
export interface RunningServer extends ComposedServer {
  /** The address it listens on, e.g. `http://127.0.0.1:8080`. */
  address: string;
}

export interface ComposeOptions {
  /** Where log lines go (for tests that read them); defaults to stdout. */
  logStream?: NodeJS.WritableStream;
  clock?: Clock;
}

/**
 * Opens services, builds the context over them and the app over that, ready to `listen()` or
 * `inject()`. Messages the services log while starting reach the app's logger once it exists.
 */
export async function composeServer(
  config: IdgateConfig,
  options: ComposeOptions = {},
): Promise<ComposedServer> {
  let app: FastifyInstance | undefined;
  // Services start before the app (and its logger) exists; their messages wait for it.
  const early: Array<{ level: 'warn' | 'info'; message: string }> = [];
  const logger = {
    warn: (message: string) => (app ? app.log.warn(message) : early.push({ level: 'warn', message })),
    info: (message: string) => (app ? app.log.info(message) : early.push({ level: 'info', message })),
  };
  const tracing = await startTracing(config.otel, { warn: logger.warn });
  if (tracing !== undefined) logger.info(`OpenTelemetry traces are exported to ${tracesUrl(config.otel)}`);
  let services: Services;
  try {
    services = await openServices(config, {
      logger,
      tracing,
      heartbeat: true,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    });
  } catch (error) {
    await tracing?.shutdown();
    throw error;
  }
  try {
    const applied = await applyDeclaredPath(services, process.env);
    if (applied !== undefined)
      logger.info(`declarations ${config.declarations.path}: ${appliedSummary(applied)}`);
  } catch (error) {
    await services.close();
    await tracing?.shutdown();
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`declarations ${config.declarations.path}: ${message}`, { cause: error });
  }
  let running: Awaited<ReturnType<typeof createAppContext>>;
  try {
    running = await createAppContext(services, {
      // A failure because the database is away is the outage StorageHealth logs once: not again here.
      onFeedError: (err, what) =>
        outage(err)
          ? app?.log.debug({ err }, `change feed: ${what} failed`)
          : app?.log.warn({ err }, `change feed: ${what} failed`),
      onPurge: (purged, err) => {
        if (err === undefined) app?.log.info({ purged }, 'purged expired records');
        else
          app?.log[outage(err) ? 'debug' : 'warn'](
            { err },
            'purging expired records failed; the next round tries again',
          );
      },
      onAuditWriteFailed: (err) =>
        app?.log.warn(
          { err },
          'writing TokenReview audit events failed; they are kept in memory and written at the next interval',
        ),
      onAuditWriteRecovered: () => app?.log.info('TokenReview audit events are written again'),
    });
  } catch (error) {
    await services.close();
    await tracing?.shutdown();
    throw error;
  }
  const { context } = running;
  try {
    app = await buildApp({
      context,
      ...(options.logStream === undefined ? {} : { logStream: options.logStream }),
      tracing,
    });
  } catch (error) {
    await running.stop();
    await services.close();
    await tracing?.shutdown();
    throw error;
  }
  const built = app;
  for (const { level, message } of early) built.log[level](message);
  services.database.health.logTo(built.log);

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      // Requests in flight finish (new ones get 503); each keep-alive connection is closed as soon
      // as it goes idle rather than after keepAliveTimeout, which would hold the shutdown for a
      // minute. A connection still busy after the grace period is cut.
      const { server } = built;
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      const cut = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      try {
        await built.close();
      } finally {
        clearInterval(sweep);
        clearTimeout(cut);
      }
      await running.stop();
      await services.close();
      // The last spans (those of the shutdown's own requests too) are exported before exit.
      await tracing?.shutdown();
    })();
    return closing;
  };
  return { app: built, services, context, directory: running.directory, close };
}

/** Whether `error` says the database cannot answer now (what StorageHealth reports). */
function outage(error: unknown): boolean {
  return error instanceof StorageUnavailableError || storageUnavailability(error) !== undefined;
}

/** How long a shutdown waits for requests in flight before it cuts their connections (ms). */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Composes the server ({@link composeServer}) and listens on the configured host and port. With
 * `handleSignals`, SIGTERM and SIGINT shut it down gracefully.
 */
export async function startServer(
  config: IdgateConfig,
  options: ComposeOptions & { handleSignals?: boolean } = {},
): Promise<RunningServer> {
  const composed = await composeServer(config, options);
  const { app, close } = composed;
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await close();
    throw error;
  }
  const bound = app.server.address();
  const address =
    typeof bound === 'object' && bound !== null
      ? `http://${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`
      : String(bound);
  app.log.info({ issuer: config.issuer, address }, 'idgate is listening');
  // Start-up and bursts of requests grow V8's heap; it is given back once the server is idle.
  const compaction = startIdleCompaction();
  if (!compaction.active)
    app.log.info(
      'idle compaction off: Node.js runs without --expose-gc, so an idle server keeps what its busiest moment grew',
    );
  const stopAndClose = () => {
    compaction.stop();
    return close();
  };

  if (options.handleSignals) {
    const onSignal = (signal: NodeJS.Signals) => {
      app.log.info({ signal }, 'shutting down');
      stopAndClose().then(
        () => process.exit(0),
        (err: unknown) => {
          app.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    // logrotate moved the audit log away: write to a new file at the configured path.
    process.on('SIGHUP', () => composed.services.auditLog?.reopen());
  }
  return { ...composed, close: stopAndClose, address };
}
