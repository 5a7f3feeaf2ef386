import { createRequire } from 'node:module';
import { isIdgateError } from '@idgate/core';
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.js';
import { registerApiKeys } from './api-keys.js';
import { registerApply } from './apply.js';
import { registerAudit } from './audit.js';
import { registerClients } from './clients.js';
import { registerClusters } from './clusters.js';
import { type CliContext, CliError, type CliIo, createContext } from './context.js';
import { registerGroups } from './groups.js';
import { registerIdps } from './idps.js';
import { registerBlockedAddresses, registerNotBefore } from './incident.js';
import { registerInit } from './init.js';
import { registerKeys } from './keys.js';
import { registerMigrate, registerServe } from './serve.js';
import { registerSessions } from './sessions.js';
import { registerTrusts } from './trusts.js';
import { registerUsers } from './users.js';

export { CliError, type CliIo } from './context.js';

/** Exit code for a command line commander cannot parse (unknown command or option, missing argument). */
export const USAGE_EXIT_CODE = 2;

function version(): string {
  try {
    // src/cli and dist/cli both sit two levels below the package root.
    return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** The `idgate` command line program. */
export function buildProgram(ctx: CliContext): Command {
  const program = new Command('idgate');
  // Set before adding commands: subcommands inherit both.
  program.exitOverride().configureOutput({
    writeOut: (text) => ctx.io.stdout.write(text),
    writeErr: (text) => ctx.io.stderr.write(text),
    // One line: `idgate: unknown command 'user' (Did you mean users?)`.
    outputError: (text, write) =>
      write(
        `idgate: ${text
          .replace(/^error: /, '')
          .trim()
          .replace(/\s*\n\s*/g, ' ')}\n`,
      ),
  });
  program
    .description('idgate: an OpenID Connect provider and Kubernetes TokenReview webhook')
    .version(version(), '-V, --version')
    .option(
      '-c, --config <file>',
      'YAML configuration file (default: $IDGATE_CONFIG); IDGATE_* variables override it',
    )
    .showSuggestionAfterError()
    .addHelpText(
      'after',
      '\n--json output is a single JSON document on stdout; warnings go to stderr.\n' +
        'Secrets (passwords, API keys, client secrets) are printed only when created.',
    );
  registerServe(program, ctx);
  registerMigrate(program, ctx);
  registerInit(program, ctx);
  registerUsers(program, ctx);
  registerGroups(program, ctx);
  registerClients(program, ctx);
  registerApiKeys(program, ctx);
  registerKeys(program, ctx);
  registerIdps(program, ctx);
  registerClusters(program, ctx);
  registerTrusts(program, ctx);
  registerSessions(program, ctx);
  registerNotBefore(program, ctx);
  registerBlockedAddresses(program, ctx);
  registerAudit(program, ctx);
  registerApply(program, ctx);
  return program;
}

/**
 * Runs the CLI on `argv` (the arguments after the script, like `process.argv.slice(2)`) and returns
 * the exit code. Failures print one `idgate: <reason>` line to stderr (a configuration error one
 * line per problem); IDGATE_DEBUG=1 adds the stack.
 * `serve` returns 0 once listening; the server then runs until SIGTERM or SIGINT.
 */
export async function runCli(argv: string[], io: Partial<CliIo> = {}): Promise<number> {
  const full: CliIo = {
    stdout: io.stdout ?? process.stdout,
    stderr: io.stderr ?? process.stderr,
    stdin: io.stdin ?? process.stdin,
    env: io.env ?? process.env,
  };
  const program = buildProgram(createContext(full));
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    return report(error, full);
  }
}

// A client gets a generic word for an unavailable database; the operator at the CLI gets the driver's.
function operatorMessage(error: Error): string {
  if (isIdgateError(error) && error.kind === 'storage_unavailable' && error.cause instanceof Error) {
    return `the database is unavailable: ${error.cause.message}`;
  }
  return error.message;
}

function report(error: unknown, io: CliIo): number {
  // Commander has printed its own message (or the help, or the version) already.
  if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : USAGE_EXIT_CODE;
  const debug = io.env.IDGATE_DEBUG === '1';
  if (error instanceof ConfigError) {
    io.stderr.write(`idgate: ${error.message}\n`);
  } else {
    const message = error instanceof Error ? operatorMessage(error) : String(error);
    io.stderr.write(`idgate: ${message.replace(/\s*\n\s*/g, ' ').trim() || 'failed'}\n`);
  }
  if (debug && error instanceof Error && error.stack !== undefined) io.stderr.write(`${error.stack}\n`);
  return error instanceof CliError ? error.exitCode : 1;
}
