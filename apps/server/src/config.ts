import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { IdentityProviderConfig, SigningAlgorithm } from '@idgate/schema';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const Issuer = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .transform((url) => url.replace(/\/+$/, ''))
  .refine((url) => !/[?#]/.test(url), 'must not have a query or fragment (OIDC Discovery §3)')
  .refine(
    (url) => new URL(url).pathname.endsWith('/oauth'),
    'must end with /oauth: the issuer is {base_url}/oauth',
  );

const Seconds = z.coerce.number().int().positive().max(31_536_000);

/** A timeout in seconds, fractions allowed (`0.5`), at least a millisecond and at most ten minutes. */
const Timeout = z.coerce.number().min(0.001).max(600);

/** An IPv4 or IPv6 address, or a CIDR range of them (`10.0.0.0/8`, `fd00::/8`). */
function isAddressOrRange(value: string): boolean {
  const [address = '', bits, extra] = value.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  return /^[0-9]{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

const TRUST_PROXY_TRUE =
  'true would believe any X-Forwarded-For, so a client could choose its own address and dodge the per-address sign-in limits: give the number of proxies in front of idgate (1 for an ingress) or their addresses/CIDR ranges';

/**
 * Which proxies' `X-Forwarded-For` to believe, as fastify takes it: `false` (none: the peer's
 * address is the client's), a hop count (the last N proxies), or the proxies' addresses and CIDR
 * ranges. The environment writes a list comma-separated. `true` is refused: see
 * {@link TRUST_PROXY_TRUE}.
 */
const TrustProxy = z.preprocess(
  (value) => {
    if (typeof value !== 'string') return value;
    const text = value.trim();
    if (text === 'false' || text === '0') return false;
    if (text === 'true') return true;
    if (/^[0-9]+$/.test(text)) return Number(text);
    return text.split(',').map((part) => part.trim());
  },
  z.union(
    [
      z.literal(false),
      z.literal(true).refine(() => false, TRUST_PROXY_TRUE),
      z.int().min(1).max(10),
      z
        .array(z.string().refine(isAddressOrRange, 'must be an IP address or CIDR range'))
        .min(1)
        .transform((list) => list),
    ],
    {
      error:
        'must be false, a number of proxies from 1 to 10, or a comma-separated list of proxy IP addresses or CIDR ranges',
    },
  ),
);

const ConfigSchema = z.strictObject({
  host: z.string().min(1).default('0.0.0.0'),
  port: z.coerce.number().int().min(0).max(65_535).default(8080),
  issuer: Issuer.default('http://localhost:8080/oauth'),
  database: z
    .strictObject({
      url: z.string().min(1).default('sqlite:./data/idgate.db'),
      /** Seconds to open a PostgreSQL connection or wait for a free one in the pool. */
      connectTimeout: Timeout.default(5),
      /** Seconds PostgreSQL lets one statement run before cancelling it (`statement_timeout`). */
      statementTimeout: Timeout.default(10),
      /**
       * Seconds the client waits for any answer to a query (the backstop when the server does not
       * answer at all, e.g. frozen); at least `statementTimeout`.
       */
      queryTimeout: Timeout.default(12),
      /** Seconds a PostgreSQL session may sit idle inside a transaction before the server ends it. */
      idleInTransactionTimeout: Timeout.default(30),
      /** Seconds of silence before TCP keepalive probes a PostgreSQL connection; 0 for none. */
      keepAlive: z.coerce.number().min(0).max(3600).default(10),
      /** Seconds SQLite waits for another connection's write lock before giving up (`busy_timeout`). */
      busyTimeout: Timeout.default(5),
    })
    .prefault({}),
  secret: z.string().min(32, 'must be at least 32 characters').optional(),
  secretFile: z.string().min(1).optional(),
  signing: z
    .strictObject({
      algorithm: SigningAlgorithm.default('RS256'),
      /** Seconds a rotated key is published before it signs (every replica loads it meanwhile). */
      activationDelay: z.coerce.number().int().min(0).max(3600).default(10),
    })
    .prefault({}),
  tokens: z
    .strictObject({
      accessTokenTtl: Seconds.default(3600),
      idTokenTtl: Seconds.default(3600),
      refreshTokenTtl: Seconds.default(2_592_000),
      maxAccessTokenTtl: Seconds.default(86_400),
      /** A grant's absolute lifetime: no refresh token outlives it. */
      grantTtl: Seconds.default(7_776_000),
      /** Give trusted clients refresh tokens without `offline_access`. */
      refreshForTrustedClients: z.stringbool().or(z.boolean()).default(false),
      /**
       * Seconds after a rotation during which the rotated refresh token answers the same successor
       * (concurrent refreshes); later, or with 0, presenting it again revokes the grant.
       */
      refreshReuseWindow: z.coerce.number().int().min(0).max(300).default(10),
    })
    .prefault({}),
  session: z.strictObject({ ttl: Seconds.default(86_400) }).prefault({}),
  /** RFC 8628 device authorization grant. */
  device: z
    .strictObject({
      /** How long a device code and its user code live, seconds. */
      codeTtl: z.coerce.number().int().min(60).max(86_400).default(600),
      /** Seconds a device waits between polls (grows by 5 at each `slow_down`). */
      interval: z.coerce.number().int().min(1).max(300).default(5),
    })
    .prefault({}),
  /** What a password someone chooses must be (NIST SP 800-63B): the length is all that is configurable. */
  passwordPolicy: z
    .strictObject({
      minLength: z.coerce.number().int().min(8, 'must be at least 8 (NIST SP 800-63B)').max(256).default(12),
    })
    .prefault({}),
  bruteForce: z
    .strictObject({
      maxFailures: z.coerce.number().int().min(1).max(1000).default(5),
      windowSeconds: Seconds.default(900),
      maxFailuresPerAddress: z.coerce.number().int().min(1).max(100_000).default(100),
      /** Failed password-grant attempts through one client within the window that block it. */
      maxFailuresPerClient: z.coerce.number().int().min(1).max(1_000_000).default(500),
    })
    .prefault({}),
  logout: z
    .strictObject({
      // `true`/`false` are the spellings of before `client` existed: all grants, or none.
      revokeGrants: z
        .enum(['client', 'all', 'none'])
        .or(z.boolean().transform((all) => (all ? 'all' : 'none')))
        .default('client'),
    })
    .prefault({}),
  pkce: z
    .strictObject({
      allowPlain: z.stringbool().or(z.boolean()).default(false),
      requireForConfidentialClients: z.stringbool().or(z.boolean()).default(false),
    })
    .prefault({}),
  log: z.strictObject({ level: z.enum(LOG_LEVELS).default('info') }).prefault({}),
  maintenance: z
    .strictObject({
      /** Seconds between purges of expired codes, tokens, sign-ins and revocations; 0 for none. */
      purgeInterval: z.coerce.number().int().min(0).max(604_800).default(3600),
    })
    .prefault({}),
  /** Identity providers declared in the file (GitOps); the CLI and admin API manage others in the database. */
  identityProviders: z.array(IdentityProviderConfig).default([]),
  federation: z
    .strictObject({
      /** The client that tokens answered straight from a callback are issued to, unless the provider names one. */
      tokenClientId: z.string().min(1).optional(),
      /**
       * Seconds between re-checks of a federated grant's identity at its provider, on refresh
       * (groups, email, whether the person still exists there); 0 never re-checks.
       */
      revalidateInterval: z.coerce.number().int().min(0).max(31_536_000).default(900),
    })
    .prefault({}),
  cache: z
    .strictObject({
      /**
       * Seconds the in-memory directory may go without hearing from the database (an outage)
       * before it stops answering token reviews, introspection and userinfo from memory and
       * answers 503 instead; 0 for no limit.
       */
      maxStaleness: z.coerce.number().int().min(0).max(31_536_000).default(0),
    })
    .prefault({}),
  trustProxy: TrustProxy.default(false),
  bodyLimit: z.coerce.number().int().min(1024).max(10_485_760).default(65_536),
});

/** The validated server configuration. */
export type IdgateConfig = z.output<typeof ConfigSchema>;
/** Configuration as written in a file or passed to {@link loadConfig} overrides. */
export type IdgateConfigInput = z.input<typeof ConfigSchema>;

/** One message per bad setting, each naming the setting. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

// Environment variable → path in the config object.
const ENV: Record<string, string[]> = {
  IDGATE_HOST: ['host'],
  IDGATE_PORT: ['port'],
  IDGATE_ISSUER: ['issuer'],
  IDGATE_DATABASE_URL: ['database', 'url'],
  IDGATE_DATABASE_CONNECT_TIMEOUT: ['database', 'connectTimeout'],
  IDGATE_DATABASE_STATEMENT_TIMEOUT: ['database', 'statementTimeout'],
  IDGATE_DATABASE_QUERY_TIMEOUT: ['database', 'queryTimeout'],
  IDGATE_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT: ['database', 'idleInTransactionTimeout'],
  IDGATE_DATABASE_KEEPALIVE: ['database', 'keepAlive'],
  IDGATE_DATABASE_BUSY_TIMEOUT: ['database', 'busyTimeout'],
  IDGATE_CACHE_MAX_STALENESS: ['cache', 'maxStaleness'],
  IDGATE_SECRET: ['secret'],
  IDGATE_SECRET_FILE: ['secretFile'],
  IDGATE_SIGNING_ALGORITHM: ['signing', 'algorithm'],
  IDGATE_KEY_ACTIVATION_DELAY: ['signing', 'activationDelay'],
  IDGATE_ACCESS_TOKEN_TTL: ['tokens', 'accessTokenTtl'],
  IDGATE_ID_TOKEN_TTL: ['tokens', 'idTokenTtl'],
  IDGATE_REFRESH_REUSE_WINDOW: ['tokens', 'refreshReuseWindow'],
  IDGATE_SESSION_TTL: ['session', 'ttl'],
  IDGATE_DEVICE_CODE_TTL: ['device', 'codeTtl'],
  IDGATE_DEVICE_POLL_INTERVAL: ['device', 'interval'],
  IDGATE_PURGE_INTERVAL: ['maintenance', 'purgeInterval'],
  IDGATE_LOGIN_MAX_FAILURES: ['bruteForce', 'maxFailures'],
  IDGATE_PASSWORD_MIN_LENGTH: ['passwordPolicy', 'minLength'],
  IDGATE_LOGIN_WINDOW: ['bruteForce', 'windowSeconds'],
  IDGATE_LOG_LEVEL: ['log', 'level'],
  IDGATE_TRUST_PROXY: ['trustProxy'],
  IDGATE_BODY_LIMIT: ['bodyLimit'],
  IDGATE_UPSTREAM_REVALIDATE_INTERVAL: ['federation', 'revalidateInterval'],
};

/** Every `IDGATE_*` variable the server reads, with the config path it sets. */
export const CONFIG_ENVIRONMENT: Readonly<Record<string, readonly string[]>> = ENV;

const envName = (path: PropertyKey[]) =>
  Object.entries(ENV).find(([, p]) => p.join('.') === path.join('.'))?.[0];

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    node[key] = typeof next === 'object' && next !== null && !Array.isArray(next) ? { ...next } : {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1] as string] = value;
}

function readFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError([
      `config file ${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    ]);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (error) {
    throw new ConfigError([
      `config file ${file}: not valid YAML (${(error as Error).message.split('\n')[0]})`,
    ]);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ConfigError([`config file ${file}: must be a mapping`]);
  return parsed as Record<string, unknown>;
}

/**
 * Builds the configuration: defaults, then the YAML file (`file`, else `IDGATE_CONFIG`), then
 * `IDGATE_*` variables, then `overrides`. Every bad setting is reported, each by the name the
 * operator used for it (the environment variable, or its path in the file).
 */
export function loadConfig(
  options: { file?: string | undefined; env?: NodeJS.ProcessEnv; overrides?: IdgateConfigInput } = {},
): IdgateConfig {
  const env = options.env ?? process.env;
  const file = options.file ?? env.IDGATE_CONFIG;
  const raw: Record<string, unknown> = file === undefined || file === '' ? {} : readFile(file);
  const fromEnv = new Set<string>();
  for (const [name, path] of Object.entries(ENV)) {
    const value = env[name];
    if (value !== undefined && value !== '') {
      setPath(raw, path, value);
      fromEnv.add(path.join('.'));
    }
  }
  for (const [key, value] of Object.entries(options.overrides ?? {})) raw[key] = value;
  const result = ConfigSchema.safeParse(raw);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((issue) => {
        if (issue.code === 'unrecognized_keys') {
          const at = issue.path.length > 0 ? `${issue.path.join('.')}.` : '';
          return `${issue.keys.map((k) => at + k).join(', ')}: unknown setting`;
        }
        const path = issue.path.join('.');
        const name = fromEnv.has(path) ? envName(issue.path) : path || 'config';
        return `${name}: ${issue.message}`;
      }),
    );
  }
  const conflicts: string[] = [];
  if (result.data.secret !== undefined && result.data.secretFile !== undefined) {
    conflicts.push('secret, secretFile: set only one of them');
  }
  const { accessTokenTtl, idTokenTtl, maxAccessTokenTtl } = result.data.tokens;
  for (const [name, value] of [
    ['tokens.accessTokenTtl', accessTokenTtl],
    ['tokens.idTokenTtl', idTokenTtl],
  ] as const) {
    if (value > maxAccessTokenTtl)
      conflicts.push(`${name}: must not exceed tokens.maxAccessTokenTtl (${maxAccessTokenTtl})`);
  }
  const { statementTimeout, queryTimeout } = result.data.database;
  if (queryTimeout < statementTimeout)
    conflicts.push(
      `database.queryTimeout: must be at least database.statementTimeout (${statementTimeout}), so the server cancels a slow statement before the client gives up on it`,
    );
  const names = result.data.identityProviders.map((provider) => provider.name);
  const repeated = names.filter((name, i) => names.indexOf(name) !== i);
  if (repeated.length > 0)
    conflicts.push(`identityProviders: ${[...new Set(repeated)].join(', ')} declared more than once`);
  if (conflicts.length > 0) throw new ConfigError(conflicts);
  return result.data;
}

/** The base URL the issuer lives under: the issuer without its trailing `/oauth`. */
export function baseUrlOf(config: Pick<IdgateConfig, 'issuer'>): string {
  return config.issuer.slice(0, -'/oauth'.length);
}
