import type { Command } from 'commander';
import { configWarnings } from '../config.js';
import { migrateToLatest, openDatabase } from '../storage/index.js';
import type { CliContext } from './context.js';
import { isInitialized, NEXT_STEP_ON_EMPTY, startBanner } from './first-steps.js';

export function registerServe(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description('run the server (SIGTERM or SIGINT stop it gracefully)')
    .action(async (_options: unknown, command: Command) => {
      const config = ctx.config(command);
      // Logs go to stdout as JSON; an injected stdout (tests) gets them instead.
      const logStream = ctx.io.stdout === process.stdout ? undefined : ctx.io.stdout;
      // Loaded here: the HTTP stack is needed by this command only.
      const { startServer } = await import('../serve.js');
      const running = await startServer(config, {
        handleSignals: true,
        ...(logStream === undefined ? {} : { logStream }),
      });
      const warnings = configWarnings(config, ctx.io.env);
      for (const warning of warnings) running.app.log.warn(warning);
      const initialized = await isInitialized(running.services.storage);
      if (!initialized) running.app.log.info(NEXT_STEP_ON_EMPTY);
      // A person at a terminal gets where to go in words; log collectors read only the JSON on stdout.
      if ((ctx.io.stderr as { isTTY?: boolean }).isTTY === true)
        ctx.io.stderr.write(
          startBanner({ address: running.address, issuer: config.issuer, initialized, warnings }),
        );
      // The open server keeps the process alive; the signal handler ends it.
    });
}

export function registerMigrate(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description('apply pending database migrations (serve and the other commands also do this)')
    .option('--json', 'print {"applied": [...]}')
    .action(async (options: { json?: boolean }, command: Command) => {
      const config = ctx.config(command);
      // Migrations may run longer than a request may: an hour per statement.
      const database = await openDatabase(config.database.url, {
        ...config.database,
        statementTimeout: 3600,
        queryTimeout: 3600,
        idleInTransactionTimeout: 3600,
      });
      try {
        const { applied } = await migrateToLatest(database);
        if (options.json) ctx.json({ applied });
        else if (applied.length === 0) ctx.out('database is up to date');
        else ctx.out(`applied migrations: ${applied.join(', ')}`);
      } finally {
        await database.close();
      }
    });
}
