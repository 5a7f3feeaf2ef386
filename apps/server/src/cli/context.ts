import type { AdminPorts } from '@idgate/core/admin';
import { type AuditActor, describeFirstIssue } from '@idgate/schema';
import type { Command } from 'commander';
import { z } from 'zod';
import { adminPorts } from '../admin-ports.js';
import { type IdgateConfig, loadConfig } from '../config.js';
import { openServices, type Services, type StartupLogger } from '../services.js';
import { DatabaseNotFoundError } from '../storage/index.js';

/** The actor of every change the CLI makes on the database. */
const CLI_ACTOR: AuditActor = { kind: 'cli', id: null };

/** Where the CLI reads and writes; `runCli` defaults each to the process's own. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
}

/** An expected failure: printed as one `idgate: <message>` line, exit code 1 by default. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** What every command's action gets. */
export interface CliContext {
  readonly io: CliIo;
  /** Writes one line (a newline is added) to stdout. */
  out(line?: string): void;
  /** Writes one line to stderr, prefixed `idgate: `. */
  note(line: string): void;
  /** Prints `value` as the single JSON document on stdout. */
  json(value: unknown): void;
  /** The configuration from `--config` / IDGATE_CONFIG and IDGATE_* variables. */
  config(command: Command): IdgateConfig;
  /**
   * Opens services (migrations, first signing key), runs `work`, and closes them. Only a database
   * idgate already set up is opened unless `create` is set (`init`): any other command refuses a
   * missing one with a {@link CliError} naming where it looked, and creates no file, secret or key.
   */
  withServices<T>(
    config: IdgateConfig,
    work: (services: Services) => Promise<T>,
    options?: OpenOptions,
  ): Promise<T>;
  /** Like `withServices`, with the ports of core's administrative use cases over them. */
  withAdmin<T>(
    config: IdgateConfig,
    work: (ports: AdminPorts, services: Services) => Promise<T>,
    options?: OpenOptions,
  ): Promise<T>;
}

/** How a command opens the database. */
export interface OpenOptions {
  /** Create the database (and its secret and signing key) when it does not exist: `init` only. */
  create?: boolean;
}

/** The default database URL, as the configuration has it. */
const DEFAULT_DATABASE_URL = 'sqlite:./data/idgate.db';

/**
 * The one-line refusal for a missing database: where idgate looked, where that place came from,
 * and how to fix it.
 */
function missingDatabaseMessage(
  error: DatabaseNotFoundError,
  source: { env: NodeJS.ProcessEnv; file: string | undefined; url: string },
): string {
  const fromEnv = source.env.IDGATE_DATABASE_URL !== undefined && source.env.IDGATE_DATABASE_URL !== '';
  const origin = fromEnv
    ? 'set by IDGATE_DATABASE_URL'
    : source.file !== undefined && source.url !== DEFAULT_DATABASE_URL
      ? `set by database.url in ${source.file}`
      : `the default ${DEFAULT_DATABASE_URL}, relative to the working directory ${process.cwd()}`;
  return (
    `${error.message} (${origin}). Run \`idgate init\` to create and set up a database there ` +
    '(or `idgate migrate` for the tables alone), or set IDGATE_DATABASE_URL or --config to an existing idgate database'
  );
}

export function createContext(io: CliIo): CliContext {
  const out = (line = '') => {
    io.stdout.write(`${line}\n`);
  };
  const note = (line: string) => {
    io.stderr.write(`idgate: ${line}\n`);
  };
  const logger: StartupLogger = {
    warn: (message) => note(`warning: ${message}`),
    info: (message) => note(message),
  };
  let configFile: string | undefined;
  const config = (command: Command) => {
    const { config: file } = command.optsWithGlobals<{ config?: string }>();
    configFile = file ?? (io.env.IDGATE_CONFIG || undefined);
    return loadConfig({ file, env: io.env });
  };
  const open = async (configuration: IdgateConfig, options: OpenOptions) => {
    try {
      return await openServices(configuration, { logger, existing: options.create !== true });
    } catch (error) {
      if (!(error instanceof DatabaseNotFoundError)) throw error;
      const source = { env: io.env, file: configFile, url: configuration.database.url };
      throw new CliError(missingDatabaseMessage(error, source));
    }
  };
  const withServices = async <T>(
    configuration: IdgateConfig,
    work: (services: Services) => Promise<T>,
    options: OpenOptions = {},
  ) => {
    const services = await open(configuration, options);
    try {
      return await work(services);
    } finally {
      await services.close();
    }
  };
  return {
    io,
    out,
    note,
    json: (value) => out(JSON.stringify(value, null, 2)),
    config,
    withServices,
    withAdmin: (configuration, work, options) =>
      withServices(
        configuration,
        (services) => work({ ...adminPorts(services), auditActor: () => CLI_ACTOR }, services),
        options,
      ),
  };
}

/** The fields that are set, for a schema whose fields are optional (not `undefined`). */
export function definedOnly(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

/** A commander option parser that collects every occurrence of a repeatable option. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** A label function naming fields by the options that set them (a field without one by its path). */
export function optionLabels(options: Readonly<Record<string, string>>): (path: string) => string {
  return (path) => options[path] ?? path;
}

/**
 * Reads a secret from stdin: everything up to EOF, minus one trailing newline (`\n` or `\r\n`).
 * @throws CliError when nothing remains.
 */
export async function readSecretFromStdin(stdin: NodeJS.ReadableStream, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  const text = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (text === '') throw new CliError(`the ${what} read from stdin is empty`);
  return text;
}

/** Formats rows as left-aligned columns under a header. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, i) =>
    Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** An instant as ISO 8601 text, or `-` when there is none. */
export function when(date: Date | null): string {
  return date === null ? '-' : date.toISOString();
}

/**
 * `value` checked against `schema`.
 * @throws CliError naming `field`, the value and the first problem.
 */
export function parseField<T>(schema: z.core.$ZodType<T>, value: unknown, field: string): T {
  const result = z.safeParse(schema, value);
  if (result.success) return result.data;
  throw new CliError(describeFirstIssue(result.error, { label: () => field, input: value }));
}
