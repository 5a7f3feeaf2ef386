import { parseArgs } from 'node:util';
import { usageError } from './errors.js';

/** The audience of a cluster's tokens when only its name is given: idgate's default cluster audience. */
export function clusterAudience(cluster: string): string {
  return `kubernetes:${cluster}`;
}

/** Options of `kubectl-idgate get-token`. */
export interface GetTokenArgs {
  command: 'get-token';
  issuer: string;
  clientId: string;
  audience: string;
  device: boolean;
  noBrowser: boolean;
  listen: { host: string; port: number };
  cacheDir: string | undefined;
  /** How long the browser flow waits for the redirect, in seconds. */
  timeoutSeconds: number;
}

/** Options of `kubectl-idgate get-token --exchange`: a CI job's or workload's token exchanged (RFC 8693). */
export interface ExchangeArgs {
  command: 'exchange';
  issuer: string;
  /** The cluster's audience (what the access token is for). */
  audience: string;
  /** The audience GitHub Actions' token is asked for: the trust's audience. */
  subjectAudience: string;
  /** The variable holding the token (GitLab CI's id_tokens). */
  tokenEnv: string | undefined;
  /** The file holding the token (a projected service-account token). */
  tokenFile: string | undefined;
  cacheDir: string | undefined;
}

/** The audience GitHub Actions' token is asked for unless `--exchange-audience` says otherwise. */
export const EXCHANGE_AUDIENCE_DEFAULT = 'idgate';

/** Options of `kubectl-idgate setup`. */
export interface SetupArgs {
  command: 'setup';
  issuer: string;
  clientId: string;
  cluster: string;
  server: string;
  certificateAuthority: string | undefined;
  kubeconfig: string | undefined;
  context: string | undefined;
  /** The command kubectl runs (default `kubectl-idgate`, found on PATH). */
  execCommand: string;
  cacheDir: string | undefined;
  device: boolean;
}

/** Options of `kubectl-idgate logout`. */
export interface LogoutArgs {
  command: 'logout';
  audience: string | undefined;
  issuer: string | undefined;
  clientId: string | undefined;
  cacheDir: string | undefined;
}

/** What `--help` was asked about: the whole plugin, or one command. */
export type HelpTopic = 'get-token' | 'setup' | 'logout';

export type PluginArgs =
  | GetTokenArgs
  | ExchangeArgs
  | SetupArgs
  | LogoutArgs
  | { command: 'help'; topic?: HelpTopic }
  | { command: 'version' };

/** The help of each command: its synopsis, what it does, and its options. */
export const COMMAND_HELP: Record<HelpTopic, string> = {
  'get-token': `Usage:
  kubectl-idgate get-token --issuer URL --client-id ID (--cluster NAME | --audience A)
                           [--device] [--no-browser] [--listen-address 127.0.0.1:PORT]
                           [--cache-dir DIR] [--timeout SECONDS]
      The kubectl exec credential plugin: prints an ExecCredential with a token for the cluster,
      from the cache, by a silent refresh, or after a sign-in in the browser or on another device.
      A cluster that requires a second factor: signs in again once with acr_values when idgate
      refuses the refresh for want of one.
  kubectl-idgate get-token --exchange --issuer URL (--cluster NAME | --audience A)
                           [--exchange-audience AUD | --token-env VARIABLE | --token-file FILE]
                           [--cache-dir DIR]
      For CI jobs and workloads: exchanges the job's or pod's own token at idgate (RFC 8693, under
      a trust) for a token for the cluster, and prints it as an ExecCredential, cached until
      shortly before it expires. The token is GitHub Actions' (found by its variables), else the
      one --token-env or --token-file names.

Options:
  --issuer URL              the OpenID provider (idgate: {base URL}/oauth)
  --client-id ID            the kubectl client (\`idgate clusters add\` prints it)
  --cluster NAME            a token for the cluster NAME (audience kubernetes:NAME)
  --audience A              a token for the audience A (instead of --cluster)
  --device                  sign in on another device (RFC 8628) instead of in a browser here
  --no-browser              print the sign-in URL without opening a browser
  --listen-address ADDR     where the browser sign-in comes back (127.0.0.1:PORT; default: any port)
  --cache-dir DIR           the token cache (default ~/.kube/cache/idgate)
  --timeout SECONDS         how long the browser sign-in may take (default 300)
  --exchange                exchange the job's or workload's token instead of signing in (no
                            --client-id; --issuer is idgate's, {base URL}/oauth)
  --exchange-audience AUD   GitHub Actions: the audience to ask the job's token for, the trust's
                            audience (default ${EXCHANGE_AUDIENCE_DEFAULT})
  --token-env VARIABLE      the variable holding the token (GitLab CI: a job's id_tokens entry)
  --token-file FILE         the file holding the token (a projected service-account token, read
                            at each exchange, so a rotated token is picked up)

Environment:
  BROWSER                   the browser to open, instead of the desktop's (xdg-open, open): a
                            command, or several separated by ':' tried in turn; "%s" in one stands
                            for the URL, else the URL is its last argument
  KUBERNETES_EXEC_INFO      set by kubectl: the ExecCredential version and whether someone is there
  ACTIONS_ID_TOKEN_REQUEST_URL, ACTIONS_ID_TOKEN_REQUEST_TOKEN
                            set by GitHub Actions in a job with "permissions: id-token: write":
                            with --exchange, where the job's token is requested
`,
  setup: `Usage:
  kubectl-idgate setup --issuer URL --client-id ID --cluster NAME --server URL
                       [--certificate-authority FILE] [--kubeconfig FILE] [--context NAME]
                       [--command PATH] [--cache-dir DIR] [--device]
      Adds the cluster, a user that runs this plugin, and a context to a kubeconfig, and makes
      the context the current one.

Options:
  --issuer URL                    the OpenID provider (idgate: {base URL}/oauth)
  --client-id ID                  the kubectl client (\`idgate clusters add\` prints it)
  --cluster NAME                  the cluster's name in idgate (tokens for kubernetes:NAME)
  --server URL                    the cluster's API server
  --certificate-authority FILE    the PEM CA of the API server's certificate
  --kubeconfig FILE               the kubeconfig to change (default: KUBECONFIG, ~/.kube/config)
  --context NAME                  the context to write (default: the cluster's name)
  --command PATH                  what kubectl runs (default kubectl-idgate, found on PATH)
  --cache-dir DIR                 the token cache get-token is to use
  --device                        always sign in on another device (a host without a browser)
`,
  logout: `Usage:
  kubectl-idgate logout [--cluster NAME | --audience A] [--issuer URL] [--client-id ID] [--cache-dir DIR]
      Revokes the refresh token (RFC 7009) and clears the cached tokens: of the sign-ins that
      hold a token for the cluster, of the issuer and client given, or of every sign-in. Cache
      files that cannot be read are removed too.

Options:
  --cluster NAME            the sign-in that serves the cluster NAME
  --audience A              the sign-in that serves the audience A (instead of --cluster)
  --issuer URL              the sign-ins at this issuer
  --client-id ID            the sign-ins of this client
  --cache-dir DIR           the token cache (default ~/.kube/cache/idgate)
`,
};

const synopsis = (help: string) => help.slice('Usage:\n'.length, help.indexOf('\n\nOptions:'));

/** The plugin's help: every command's synopsis. */
export const USAGE = `Usage:
${synopsis(COMMAND_HELP['get-token'])}
${synopsis(COMMAND_HELP.setup)}
${synopsis(COMMAND_HELP.logout)}
  kubectl-idgate COMMAND --help
      The options of COMMAND.
`;

const TIMEOUT_DEFAULT_S = 300;

/**
 * Parses the command line of the plugin.
 * @throws {PluginError} (exit code 2) for an unknown command or option, a missing or malformed value.
 */
export function parsePluginArgs(argv: readonly string[]): PluginArgs {
  const [command, ...rest] = argv;
  if (
    command === undefined ||
    command === '--help' ||
    command === '-h' ||
    (command === 'help' && rest.length === 0)
  ) {
    return { command: 'help' };
  }
  if (command === '--version') return { command: 'version' };
  const topic = Object.hasOwn(COMMAND_HELP, command) ? (command as HelpTopic) : undefined;
  // `--help` anywhere after a command answers its help, whatever else the line holds
  if (topic !== undefined && rest.some((arg) => arg === '--help' || arg === '-h'))
    return { command: 'help', topic };
  if (command === 'help' && rest[0] !== undefined && Object.hasOwn(COMMAND_HELP, rest[0]))
    return { command: 'help', topic: rest[0] as HelpTopic };
  if (command === 'help') throw usageError(`unknown command "${rest[0]}"`);
  switch (command) {
    case 'get-token':
      return parseGetToken(rest);
    case 'setup':
      return parseSetup(rest);
    case 'logout':
      return parseLogout(rest);
    default:
      throw usageError(`unknown command "${command}"`);
  }
}

function parse(args: string[], options: Record<string, { type: 'string' | 'boolean' }>) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values as Record<
      string,
      string | boolean | undefined
    >;
  } catch (error) {
    // node's messages say what is wrong ("Unknown option '--x'"): keep their first sentence
    const message = error instanceof Error ? (error.message.split('. ')[0] ?? error.message) : String(error);
    throw usageError(message);
  }
}

function required(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw usageError(`--${name} is required`);
  return value;
}

function optional(values: Record<string, string | boolean | undefined>, name: string): string | undefined {
  const value = values[name];
  if (value === '') throw usageError(`--${name} must not be empty`);
  return typeof value === 'string' ? value : undefined;
}

function checkIssuer(issuer: string): string {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw usageError(`--issuer must be an absolute http(s) URL, got "${issuer}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw usageError(`--issuer must be an absolute http(s) URL, got "${issuer}"`);
  }
  return issuer.replace(/\/+$/, '');
}

function audienceOf(
  values: Record<string, string | boolean | undefined>,
  needed: boolean,
): string | undefined {
  const cluster = optional(values, 'cluster');
  const audience = optional(values, 'audience');
  if (cluster !== undefined && audience !== undefined)
    throw usageError('pass --cluster or --audience, not both');
  if (cluster !== undefined) return clusterAudience(cluster);
  if (audience === undefined && needed) throw usageError('--cluster NAME or --audience A is required');
  return audience;
}

/** `127.0.0.1:PORT` or `[::1]:PORT`: the loopback address the browser flow listens on (RFC 8252 §7.3). */
export function parseListenAddress(value: string): { host: string; port: number } {
  const match = /^(127\.0\.0\.1|\[::1\]|localhost):(\d{1,5})$/.exec(value);
  const port = match ? Number(match[2]) : Number.NaN;
  if (!match || port > 65_535) {
    throw usageError(`--listen-address must be 127.0.0.1:PORT or [::1]:PORT, got "${value}"`);
  }
  const host = match[1] === 'localhost' ? '127.0.0.1' : (match[1] as string);
  return { host, port };
}

function parseGetToken(args: string[]): GetTokenArgs | ExchangeArgs {
  const values = parse(args, {
    exchange: { type: 'boolean' },
    'exchange-audience': { type: 'string' },
    'token-env': { type: 'string' },
    'token-file': { type: 'string' },
    issuer: { type: 'string' },
    'client-id': { type: 'string' },
    cluster: { type: 'string' },
    audience: { type: 'string' },
    device: { type: 'boolean' },
    'no-browser': { type: 'boolean' },
    'listen-address': { type: 'string' },
    'cache-dir': { type: 'string' },
    timeout: { type: 'string' },
  });
  if (values.exchange === true) return exchangeArgs(values);
  for (const name of ['exchange-audience', 'token-env', 'token-file']) {
    if (values[name] !== undefined) throw usageError(`--${name} goes with --exchange`);
  }
  const listen = optional(values, 'listen-address');
  const timeout = optional(values, 'timeout');
  const timeoutSeconds = timeout === undefined ? TIMEOUT_DEFAULT_S : Number(timeout);
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds <= 0) {
    throw usageError('--timeout must be a positive number of seconds');
  }
  return {
    command: 'get-token',
    issuer: checkIssuer(required(values, 'issuer')),
    clientId: required(values, 'client-id'),
    audience: audienceOf(values, true) as string,
    device: values.device === true,
    noBrowser: values['no-browser'] === true,
    listen: listen === undefined ? { host: '127.0.0.1', port: 0 } : parseListenAddress(listen),
    cacheDir: optional(values, 'cache-dir'),
    timeoutSeconds,
  };
}

function exchangeArgs(values: Record<string, string | boolean | undefined>): ExchangeArgs {
  for (const name of ['client-id', 'device', 'no-browser', 'listen-address', 'timeout']) {
    if (values[name] !== undefined) throw usageError(`--${name} does not go with --exchange (no sign-in)`);
  }
  const subjectAudience = optional(values, 'exchange-audience');
  const tokenEnv = optional(values, 'token-env');
  const tokenFile = optional(values, 'token-file');
  const given = [
    subjectAudience === undefined ? undefined : '--exchange-audience',
    tokenEnv === undefined ? undefined : '--token-env',
    tokenFile === undefined ? undefined : '--token-file',
  ].filter((name) => name !== undefined);
  if (given.length > 1) throw usageError(`pass one of ${given.join(', ')}: each names a different token`);
  if (tokenEnv !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv))
    throw usageError(`--token-env must be a variable name, got "${tokenEnv}"`);
  const issuer = checkIssuer(required(values, 'issuer'));
  // the exchange is idgate's: its issuer is always {base URL}/oauth
  if (!issuer.endsWith('/oauth'))
    throw usageError(`--exchange needs idgate's issuer, {base URL}/oauth, got "${issuer}"`);
  return {
    command: 'exchange',
    issuer,
    audience: audienceOf(values, true) as string,
    subjectAudience: subjectAudience ?? EXCHANGE_AUDIENCE_DEFAULT,
    tokenEnv,
    tokenFile,
    cacheDir: optional(values, 'cache-dir'),
  };
}

function parseSetup(args: string[]): SetupArgs {
  const values = parse(args, {
    issuer: { type: 'string' },
    'client-id': { type: 'string' },
    cluster: { type: 'string' },
    server: { type: 'string' },
    'certificate-authority': { type: 'string' },
    kubeconfig: { type: 'string' },
    context: { type: 'string' },
    command: { type: 'string' },
    'cache-dir': { type: 'string' },
    device: { type: 'boolean' },
  });
  const server = required(values, 'server');
  if (!/^https?:\/\//.test(server))
    throw usageError(`--server must be the API server's URL, got "${server}"`);
  return {
    command: 'setup',
    issuer: checkIssuer(required(values, 'issuer')),
    clientId: required(values, 'client-id'),
    cluster: required(values, 'cluster'),
    server,
    certificateAuthority: optional(values, 'certificate-authority'),
    kubeconfig: optional(values, 'kubeconfig'),
    context: optional(values, 'context'),
    execCommand: optional(values, 'command') ?? 'kubectl-idgate',
    cacheDir: optional(values, 'cache-dir'),
    device: values.device === true,
  };
}

function parseLogout(args: string[]): LogoutArgs {
  const values = parse(args, {
    issuer: { type: 'string' },
    'client-id': { type: 'string' },
    cluster: { type: 'string' },
    audience: { type: 'string' },
    'cache-dir': { type: 'string' },
  });
  const issuer = optional(values, 'issuer');
  return {
    command: 'logout',
    audience: audienceOf(values, false),
    issuer: issuer === undefined ? undefined : checkIssuer(issuer),
    clientId: optional(values, 'client-id'),
    cacheDir: optional(values, 'cache-dir'),
  };
}
