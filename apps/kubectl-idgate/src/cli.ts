import { readFileSync } from 'node:fs';
import { COMMAND_HELP, type PluginArgs, parsePluginArgs, USAGE } from './args.js';
import { oneLine, PluginError } from './errors.js';
import { exchangeToken } from './exchange.js';
import { getToken, type PluginContext } from './get-token.js';
import { logout } from './logout.js';
import { setup } from './setup.js';

/** The environment variable tests use to move the plugin's clock (an RFC 3339 time). Never set it otherwise. */
export const TEST_CLOCK_VARIABLE = 'IDGATE_KUBECTL_NOW';

/** The clock of the plugin: the real one, unless the test clock variable names a time. */
export function pluginClock(env: NodeJS.ProcessEnv): () => number {
  const fixed = env[TEST_CLOCK_VARIABLE];
  if (fixed === undefined || fixed === '') return Date.now;
  const time = Date.parse(fixed);
  if (Number.isNaN(time)) throw new PluginError(`${TEST_CLOCK_VARIABLE} is not a time`);
  return () => time;
}

/**
 * Runs the plugin's command line. Only `get-token` (with or without `--exchange`) writes to stdout (the ExecCredential); every
 * message goes to stderr; a failure is one line there and a non-zero exit code.
 */
export async function main(
  argv: readonly string[],
  io: { env: NodeJS.ProcessEnv; stdout: (text: string) => void; stderr: (text: string) => void },
): Promise<number> {
  const log = (line: string) => io.stderr(`${line}\n`);
  try {
    const args: PluginArgs = parsePluginArgs(argv);
    const context: PluginContext = { env: io.env, log, now: pluginClock(io.env), platform: process.platform };
    switch (args.command) {
      case 'help':
        // asked for (`--help`, `help`): on stdout, to page or grep; a bare `kubectl-idgate` on stderr
        (argv.length === 0 ? io.stderr : io.stdout)(
          args.topic === undefined ? USAGE : COMMAND_HELP[args.topic],
        );
        return 0;
      case 'version':
        io.stdout(`${version()}\n`);
        return 0;
      case 'get-token': {
        const credential = await getToken(args, context);
        io.stdout(`${JSON.stringify(credential)}\n`);
        return 0;
      }
      case 'exchange': {
        const credential = await exchangeToken(args, context);
        io.stdout(`${JSON.stringify(credential)}\n`);
        return 0;
      }
      case 'setup': {
        const written = await setup(args, io.env);
        log(
          `Added cluster "${args.cluster}", user "idgate-${args.cluster}" and context "${written.context}" to ${written.path}; "${written.context}" is now the current context.`,
        );
        return 0;
      }
      case 'logout':
        await logout(args, context);
        return 0;
    }
  } catch (error) {
    if (error instanceof PluginError) {
      io.stderr(`kubectl-idgate: ${oneLine(error)}\n`);
      return error.exitCode;
    }
    io.stderr(`kubectl-idgate: unexpected failure: ${oneLine(error)}\n`);
    return 1;
  }
}

function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}
