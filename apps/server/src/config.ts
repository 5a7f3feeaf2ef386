import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { durationSeconds, IdentityProviderConfig, SigningAlgorithm } from '@idgate/schema';
import { z } from 'zod';
import { isLoopbackHost } from './http/loopback.js';
import { LOCALES } from './pages/i18n.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const Issuer = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .transform((url) => url.replace(/\/+$/, ''))
  .refine((url) => !/[?#]/.test(url), 'must not have a query or fragment (OIDC Discovery §3)')
  .refine(
    (url) => new URL(url).pathname.endsWith('/oauth'),
    'must end with /oauth: the issuer is {base_url}/oauth',
  );

/**
 * A whole number from `min` to `max`, read from text too (the environment holds only strings).
 * One message for every way it can be wrong: `must be <what> <min>–<max>`.
 */
function whole(min: number, max: number, what = 'a whole number') {
  const error = `must be ${what} ${min}–${max}`;
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}

/**
 * A duration in whole seconds from `min` to `max`: a number of seconds, or a number with a unit
 * s, m, h or d (`15m`, `90d`), read by the one duration parser of idgate (`durationSeconds`).
 */
function seconds(min: number, max: number) {
  const error = `must be a whole number of seconds ${min}–${max}, or a number with a unit s, m, h or d (15m)`;
  return z.preprocess(
    (value) => (typeof value === 'string' ? (durationSeconds(value) ?? value) : value),
    z.int({ error }).min(min, { error }).max(max, { error }),
  );
}
const Seconds = seconds(1, 31_536_000);

const Flag = z.union([z.stringbool(), z.boolean()], { error: 'must be true or false' });

/** `must be one of a, b, c` */
function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `must be one of ${values.join(', ')}` });
}

/** A timeout in seconds, fractions allowed (`0.5`), at least a millisecond and at most ten minutes. */
const TIMEOUT = 'must be a number of seconds 0.001–600';
const Timeout = z.coerce
  .number({ error: TIMEOUT })
  .min(0.001, { error: TIMEOUT })
  .max(600, { error: TIMEOUT });
const KEEPALIVE = 'must be a number of seconds 0–3600 (0: no keepalive)';

/** An IPv4 or IPv6 address, or a CIDR range of them (`10.0.0.0/8`, `fd00::/8`). */
function isAddressOrRange(value: string): boolean {
  const [address = '', bits, extra] = value.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  return /^[0-9]{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

const TRUST_PROXY_TRUE =
  'must not be true: that would believe any X-Forwarded-For, so a client could choose its own address and dodge the per-address sign-in limits: give the number of proxies in front of idgate (1 for an ingress) or their addresses/CIDR ranges';

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
      z.int().min(1, 'must be a number of proxies 1–10').max(10, 'must be a number of proxies 1–10'),
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

/** A colour the stylesheet can take as it is: `#rgb` or `#rrggbb`. */
const Color = z
  .string({ error: 'must be a colour #rgb or #rrggbb' })
  .regex(/^#(?:[0-9a-fA-F]{3}){1,2}$/, 'must be a colour #rgb or #rrggbb');

/** The logo's media type by its file's extension. */
export const LOGO_TYPES: ReadonlyMap<string, string> = new Map([
  ['png', 'image/png'],
  ['svg', 'image/svg+xml'],
  ['jpg', 'image/jpeg'],
  ['jpeg', 'image/jpeg'],
  ['webp', 'image/webp'],
  ['gif', 'image/gif'],
]);
const LOGO_TYPE = `must be a ${[...LOGO_TYPES.keys()].join(', ')} file`;
/** `logo.PNG` → `png` */
export const extensionOf = (path: string): string => /\.([^./\\]+)$/.exec(path)?.[1]?.toLowerCase() ?? '';

/** Where OTLP/HTTP spans go: an http(s) URL without credentials (collectors take them as headers). */
const OtlpUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .refine((url) => !URL.canParse(url) || (new URL(url).username === '' && new URL(url).password === ''), {
    error: 'must not hold a user or password: give credentials as OTEL_EXPORTER_OTLP_HEADERS',
  });

/** The samplers of the OpenTelemetry environment specification (`OTEL_TRACES_SAMPLER`). */
export const TRACE_SAMPLERS = [
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
  'always_on',
  'always_off',
  'traceidratio',
] as const;

const SAMPLER_ARG = 'must be a sampling ratio 0–1';

/**
 * OpenTelemetry traces: off unless an endpoint is set. The standard `OTEL_*` variables set the
 * same settings as the file, validated here like the rest.
 */
const Telemetry = z
  .strictObject({
    /** The collector's base URL (`/v1/traces` is appended), as `OTEL_EXPORTER_OTLP_ENDPOINT`. */
    endpoint: OtlpUrl.optional(),
    /** The traces URL exactly as given, as `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`; wins over `endpoint`. */
    tracesEndpoint: OtlpUrl.optional(),
    protocol: oneOf(['http/protobuf', 'http/json']).default('http/protobuf'),
    serviceName: z
      .string({ error: 'must be a service name' })
      .trim()
      .min(1, 'must be a service name')
      .max(255, 'must be a service name of at most 255 characters')
      .default('idgate'),
    sampler: oneOf(TRACE_SAMPLERS).default('parentbased_always_on'),
    /** The ratio of the `traceidratio` samplers (1 when absent). */
    samplerArg: z.coerce
      .number({ error: SAMPLER_ARG })
      .min(0, { error: SAMPLER_ARG })
      .max(1, { error: SAMPLER_ARG })
      .optional(),
  })
  .prefault({});
const AUDIT_LOG = 'must be off, stdout, stderr or a file path';
const RETENTION =
  'must be a whole number of seconds, a number with a unit s, m, h or d (90d), or 0 / forever to keep every event';

/** A retention: seconds, `90d`-style durations, or `0` / `forever` (keep everything: 0). */
const Retention = z.preprocess(
  (value) => {
    if (typeof value !== 'string') return value;
    const text = value.trim();
    if (text === 'forever') return 0;
    return durationSeconds(text) ?? text;
  },
  z.int({ error: RETENTION }).min(0, { error: RETENTION }).max(3_153_600_000, { error: RETENTION }),
);

const DATABASE_URL = 'must be a database URL: sqlite:PATH or postgres://USER:PASSWORD@HOST:PORT/DATABASE';

const ConfigSchema = z.strictObject({
  host: z
    .string({ error: 'must be a host name or IP address' })
    .min(1, 'must be a host name or IP address')
    .default('0.0.0.0'),
  port: whole(0, 65_535, 'a port number').default(8080),
  issuer: Issuer.default('http://localhost:8080/oauth'),
  database: z
    .strictObject({
      url: z.string({ error: DATABASE_URL }).min(1, DATABASE_URL).default('sqlite:./data/idgate.db'),
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
      keepAlive: z.coerce
        .number({ error: KEEPALIVE })
        .min(0, { error: KEEPALIVE })
        .max(3600, { error: KEEPALIVE })
        .default(10),
      /** Seconds SQLite waits for another connection's write lock before giving up (`busy_timeout`). */
      busyTimeout: Timeout.default(5),
      /**
       * Seconds PostgreSQL has to answer the heartbeat (`select 1` every half second on a
       * connection of its own); unanswered, what needs the database answers 503 at once, queries
       * in flight included, until it answers again.
       */
      heartbeatTimeout: Timeout.default(1),
    })
    .prefault({}),
  secret: z
    .string({ error: 'must be text of at least 32 characters' })
    .min(32, 'must be at least 32 characters')
    .optional(),
  secretFile: z.string({ error: 'must be a file path' }).min(1, 'must be a file path').optional(),
  signing: z
    .strictObject({
      algorithm: z
        .enum(SigningAlgorithm.options, { error: `must be one of ${SigningAlgorithm.options.join(', ')}` })
        .default('RS256'),
      /** Seconds a rotated key is published before it signs (every replica loads it meanwhile). */
      activationDelay: seconds(0, 3600).default(10),
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
      refreshForTrustedClients: Flag.default(false),
      /**
       * Seconds after a rotation during which the rotated refresh token answers the same successor
       * (concurrent refreshes); later, or with 0, presenting it again revokes the grant.
       */
      refreshReuseWindow: seconds(0, 300).default(10),
    })
    .prefault({}),
  session: z.strictObject({ ttl: Seconds.default(86_400) }).prefault({}),
  /** RFC 8628 device authorization grant. */
  device: z
    .strictObject({
      /** How long a device code and its user code live, seconds. */
      codeTtl: seconds(60, 86_400).default(600),
      /** Seconds a device waits between polls (grows by 5 at each `slow_down`). */
      interval: seconds(1, 300).default(5),
    })
    .prefault({}),
  /** What a password someone chooses must be (NIST SP 800-63B): the length is all that is configurable. */
  passwordPolicy: z
    .strictObject({
      minLength: whole(8, 256, 'a password length').default(12),
    })
    .prefault({}),
  bruteForce: z
    .strictObject({
      maxFailures: whole(1, 1000).default(5),
      windowSeconds: Seconds.default(900),
      maxFailuresPerAddress: whole(1, 100_000).default(100),
      /** Failed password-grant attempts through one client within the window that block it. */
      maxFailuresPerClient: whole(1, 1_000_000).default(500),
      /**
       * Wrong device user codes from all addresses together within the window that stop the
       * verification page from reading any code until the window has passed.
       */
      maxWrongUserCodes: whole(1, 1_000_000).default(1000),
    })
    .prefault({}),
  logout: z
    .strictObject({
      // `true`/`false` are the spellings of before `client` existed: all grants, or none.
      revokeGrants: z
        .union([z.enum(['client', 'all', 'none']), z.boolean().transform((all) => (all ? 'all' : 'none'))], {
          error: 'must be one of client, all, none',
        })
        .default('client'),
    })
    .prefault({}),
  pkce: z
    .strictObject({
      allowPlain: Flag.default(false),
      requireForConfidentialClients: Flag.default(false),
    })
    .prefault({}),
  log: z.strictObject({ level: oneOf(LOG_LEVELS).default('info') }).prefault({}),
  maintenance: z
    .strictObject({
      /** Seconds between purges of expired codes, tokens, sign-ins and revocations; 0 for none. */
      purgeInterval: seconds(0, 604_800).default(3600),
    })
    .prefault({}),
  /**
   * A declarations file or directory (`idgate apply -f`) applied at every start, before the server
   * listens: what it declares is created or put back, and with `prune` what it no longer declares
   * is deleted (only objects its `manager` owns).
   */
  declarations: z
    .strictObject({
      path: z
        .string({ error: 'must be a file or directory path' })
        .min(1, 'must be a file or directory path')
        .optional(),
      prune: Flag.default(true),
      manager: z
        .string({ error: 'must be a manager name' })
        .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'must be 1 to 63 lower-case letters, digits and . _ -')
        .default('config'),
    })
    .prefault({}),
  /** Identity providers declared in the file (GitOps); the CLI and admin API manage others in the database. */
  identityProviders: z
    .array(IdentityProviderConfig, { error: 'must be a list of identity providers' })
    .default([]),
  federation: z
    .strictObject({
      /** The client that tokens answered straight from a callback are issued to, unless the provider names one. */
      tokenClientId: z.string({ error: 'must be a client id' }).min(1, 'must be a client id').optional(),
      /**
       * Seconds between re-checks of a federated grant's identity at its provider, on refresh
       * (groups, email, whether the person still exists there); 0 never re-checks.
       */
      revalidateInterval: seconds(0, 31_536_000).default(900),
      /**
       * Seconds a federated grant goes on refreshing after its provider last vouched for the
       * person while the provider cannot be reached; past them such a refresh is refused and the
       * grant revoked. 0: no limit (availability over freshness for as long as the grant lives).
       */
      revalidateMaxStaleness: seconds(0, 31_536_000).default(86_400),
    })
    .prefault({}),
  cache: z
    .strictObject({
      /**
       * Seconds the in-memory directory may go without hearing from the database (an outage)
       * before it stops answering token reviews, introspection and userinfo from memory and
       * answers 503 instead; 0 for no limit.
       */
      maxStaleness: seconds(0, 31_536_000).default(0),
    })
    .prefault({}),
  audit: z
    .strictObject({
      /** Address, user agent and email in events: kept, HMAC-hashed under the secret, or omitted. */
      personalData: oneOf(['keep', 'hash', 'omit'] as const).default('keep'),
      /** Events as JSON lines for a log shipper: off, stdout, stderr or a file path (appended). */
      log: z.string({ error: AUDIT_LOG }).min(1, AUDIT_LOG).default('off'),
      /** How long events are kept (seconds); 0 keeps them forever. */
      retention: Retention.default(7_776_000),
      /**
       * TokenReview decisions in the trail: none, one event per (cluster, API key, outcome,
       * reason) and interval with a count, or one event per review. Written in the background.
       */
      tokenReview: oneOf(['off', 'aggregated', 'all'] as const).default('aggregated'),
      /** Seconds between writes of TokenReview events (the aggregation interval). */
      tokenReviewInterval: seconds(1, 3600).default(60),
      /** How the live tail (`GET /admin/v1/events/stream`, `idgate audit --follow`) reads new events. */
      stream: z
        .strictObject({
          /** Seconds between reads of the table when nothing new came. */
          pollInterval: seconds(1, 60).default(1),
          /**
           * Seconds behind the newest event seen that each read looks again, for transactions
           * that commit after one with a later timestamp (another replica, a background writer).
           * Default 10, or the TokenReview interval plus 10 when `tokenReview` is `all`.
           */
          window: seconds(1, 7200).optional(),
          /** Seconds between keep-alive comments on an idle stream (proxies close silent ones). */
          heartbeat: seconds(1, 300).default(15),
          /** Streams one API key may hold open on one server process at once (more: 429). */
          maxPerKey: whole(1, 10_000, 'a number of streams').default(5),
          /** Streams one server process holds open at once, all keys together (more: 429). */
          maxPerProcess: whole(1, 100_000, 'a number of streams').default(100),
          /** Bytes written to a stream and not yet read by its client past which it is dropped. */
          maxBuffered: whole(65_536, 67_108_864, 'a number of bytes').default(1_048_576),
          /** Seconds a stream lives at most; then it is closed and its client resumes with Last-Event-ID. */
          maxLifetime: seconds(10, 86_400).default(900),
          /** Seconds a stream's client may read nothing of what waits for it before the stream is dropped. */
          idleTimeout: seconds(5, 3600).default(60),
        })
        .prefault({}),
    })
    .prefault({}),
  /** How the sign-in, consent, device and error pages look and which language they default to. */
  ui: z
    .strictObject({
      /** The name the pages show (titles, the local account), e.g. your company's sign-in name. */
      productName: z
        .string({ error: 'must be a name of 1–64 characters' })
        .trim()
        .min(1, 'must be a name of 1–64 characters')
        .max(64, 'must be a name of 1–64 characters')
        .default('idgate'),
      /** A logo file shown above every page (PNG, SVG, JPEG, WebP or GIF, at most 256 KiB), read at start. */
      logoFile: z
        .string({ error: 'must be a file path' })
        .min(1, 'must be a file path')
        .refine((path) => LOGO_TYPES.has(extensionOf(path)), LOGO_TYPE)
        .optional(),
      /** The colour of buttons and focus rings: `#rgb` or `#rrggbb`. */
      primaryColor: Color.default('#1d4ed8'),
      /** The colour behind the card. */
      backgroundColor: Color.default('#f3f4f6'),
      /** The language of a page when neither the application (`ui_locales`) nor the browser asks for one the pages speak. */
      defaultLocale: oneOf(LOCALES).default('en'),
    })
    .prefault({}),
  trustProxy: TrustProxy.default(false),
  bodyLimit: whole(1024, 10_485_760, 'a number of bytes').default(65_536),
  otel: Telemetry,
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
  IDGATE_DATABASE_HEARTBEAT_TIMEOUT: ['database', 'heartbeatTimeout'],
  IDGATE_CACHE_MAX_STALENESS: ['cache', 'maxStaleness'],
  IDGATE_SECRET: ['secret'],
  IDGATE_SECRET_FILE: ['secretFile'],
  IDGATE_SIGNING_ALGORITHM: ['signing', 'algorithm'],
  IDGATE_KEY_ACTIVATION_DELAY: ['signing', 'activationDelay'],
  IDGATE_ACCESS_TOKEN_TTL: ['tokens', 'accessTokenTtl'],
  IDGATE_REFRESH_TOKEN_TTL: ['tokens', 'refreshTokenTtl'],
  IDGATE_MAX_ACCESS_TOKEN_TTL: ['tokens', 'maxAccessTokenTtl'],
  IDGATE_GRANT_TTL: ['tokens', 'grantTtl'],
  IDGATE_REFRESH_FOR_TRUSTED_CLIENTS: ['tokens', 'refreshForTrustedClients'],
  IDGATE_ID_TOKEN_TTL: ['tokens', 'idTokenTtl'],
  IDGATE_REFRESH_REUSE_WINDOW: ['tokens', 'refreshReuseWindow'],
  IDGATE_SESSION_TTL: ['session', 'ttl'],
  IDGATE_DEVICE_CODE_TTL: ['device', 'codeTtl'],
  IDGATE_DEVICE_POLL_INTERVAL: ['device', 'interval'],
  IDGATE_PURGE_INTERVAL: ['maintenance', 'purgeInterval'],
  IDGATE_LOGIN_MAX_FAILURES: ['bruteForce', 'maxFailures'],
  IDGATE_PASSWORD_MIN_LENGTH: ['passwordPolicy', 'minLength'],
  IDGATE_LOGIN_WINDOW: ['bruteForce', 'windowSeconds'],
  IDGATE_LOGIN_MAX_FAILURES_PER_ADDRESS: ['bruteForce', 'maxFailuresPerAddress'],
  IDGATE_LOGIN_MAX_FAILURES_PER_CLIENT: ['bruteForce', 'maxFailuresPerClient'],
  IDGATE_LOGOUT_REVOKE_GRANTS: ['logout', 'revokeGrants'],
  IDGATE_PKCE_ALLOW_PLAIN: ['pkce', 'allowPlain'],
  IDGATE_PKCE_REQUIRE_FOR_CONFIDENTIAL_CLIENTS: ['pkce', 'requireForConfidentialClients'],
  IDGATE_FEDERATION_TOKEN_CLIENT_ID: ['federation', 'tokenClientId'],
  IDGATE_DEVICE_MAX_WRONG_CODES: ['bruteForce', 'maxWrongUserCodes'],
  IDGATE_LOG_LEVEL: ['log', 'level'],
  IDGATE_TRUST_PROXY: ['trustProxy'],
  IDGATE_UI_PRODUCT_NAME: ['ui', 'productName'],
  IDGATE_UI_LOGO_FILE: ['ui', 'logoFile'],
  IDGATE_UI_PRIMARY_COLOR: ['ui', 'primaryColor'],
  IDGATE_UI_BACKGROUND_COLOR: ['ui', 'backgroundColor'],
  IDGATE_UI_DEFAULT_LOCALE: ['ui', 'defaultLocale'],
  IDGATE_BODY_LIMIT: ['bodyLimit'],
  IDGATE_DECLARATIONS: ['declarations', 'path'],
  IDGATE_DECLARATIONS_PRUNE: ['declarations', 'prune'],
  IDGATE_DECLARATIONS_MANAGER: ['declarations', 'manager'],
  IDGATE_UPSTREAM_REVALIDATE_INTERVAL: ['federation', 'revalidateInterval'],
  IDGATE_UPSTREAM_REVALIDATE_MAX_STALENESS: ['federation', 'revalidateMaxStaleness'],
  // The OpenTelemetry specification's own names; IDGATE_OTEL_ENDPOINT, read after the standard
  // variable, wins over it.
  OTEL_EXPORTER_OTLP_ENDPOINT: ['otel', 'endpoint'],
  IDGATE_OTEL_ENDPOINT: ['otel', 'endpoint'],
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: ['otel', 'tracesEndpoint'],
  OTEL_EXPORTER_OTLP_PROTOCOL: ['otel', 'protocol'],
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: ['otel', 'protocol'],
  OTEL_SERVICE_NAME: ['otel', 'serviceName'],
  OTEL_TRACES_SAMPLER: ['otel', 'sampler'],
  OTEL_TRACES_SAMPLER_ARG: ['otel', 'samplerArg'],
  IDGATE_AUDIT_PERSONAL_DATA: ['audit', 'personalData'],
  IDGATE_AUDIT_LOG: ['audit', 'log'],
  IDGATE_AUDIT_RETENTION: ['audit', 'retention'],
  IDGATE_AUDIT_TOKEN_REVIEW: ['audit', 'tokenReview'],
  IDGATE_AUDIT_TOKEN_REVIEW_INTERVAL: ['audit', 'tokenReviewInterval'],
  IDGATE_AUDIT_STREAM_POLL_INTERVAL: ['audit', 'stream', 'pollInterval'],
  IDGATE_AUDIT_STREAM_WINDOW: ['audit', 'stream', 'window'],
  IDGATE_AUDIT_STREAM_HEARTBEAT: ['audit', 'stream', 'heartbeat'],
  IDGATE_AUDIT_STREAM_MAX_PER_KEY: ['audit', 'stream', 'maxPerKey'],
  IDGATE_AUDIT_STREAM_MAX_PER_PROCESS: ['audit', 'stream', 'maxPerProcess'],
  IDGATE_AUDIT_STREAM_MAX_BUFFERED: ['audit', 'stream', 'maxBuffered'],
  IDGATE_AUDIT_STREAM_MAX_LIFETIME: ['audit', 'stream', 'maxLifetime'],
  IDGATE_AUDIT_STREAM_IDLE_TIMEOUT: ['audit', 'stream', 'idleTimeout'],
};

/** Every `IDGATE_*` (and standard `OTEL_*`) variable the server reads, with the config path it sets. */
export const CONFIG_ENVIRONMENT: Readonly<Record<string, readonly string[]>> = ENV;

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
  // Loaded here: a server configured by environment variables alone never parses YAML.
  const { parse: parseYaml } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
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

// Settings whose value is never repeated in a message: a secret, or a URL that may hold a password.
const SECRET_KEYS = new Set(['secret', 'url', 'clientSecret', 'bindPassword', 'password']);
const MAX_SHOWN = 80;

/** What a message says the operator gave: quoted text, a number, or what kind of thing it was. */
function shown(value: unknown, key: PropertyKey | undefined): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'an empty value';
  if (typeof value === 'string') {
    if (typeof key === 'string' && SECRET_KEYS.has(key)) return `a value of ${value.length} characters`;
    return JSON.stringify(value.length > MAX_SHOWN ? `${value.slice(0, MAX_SHOWN)}…` : value);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return Array.isArray(value) ? 'a list' : 'a mapping';
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  return path.reduce<unknown>(
    (node, segment) =>
      typeof node === 'object' && node !== null ? (node as Record<PropertyKey, unknown>)[segment] : undefined,
    input,
  );
}

/**
 * What a setting accepts, as `must …`: the schema's own words where it has them (every setting of
 * this file does), else words made from zod's issue (identity provider fields, from the schema package).
 */
function acceptedBy(issue: z.core.$ZodIssue): string {
  if (issue.message.startsWith('must')) return issue.message;
  switch (issue.code) {
    case 'invalid_type': {
      const kinds: Record<string, string> = {
        string: 'text',
        object: 'a mapping of settings',
        array: 'a list',
      };
      return `must be ${kinds[issue.expected] ?? `a ${issue.expected}`}`;
    }
    case 'invalid_value':
      return `must be one of ${issue.values.map(String).join(', ')}`;
    case 'invalid_union':
      // A discriminated union that matched no option lists them, rather than zod's "Invalid input".
      return 'options' in issue && Array.isArray(issue.options)
        ? `must be one of ${issue.options.join(', ')}`
        : issue.message;
    case 'too_small':
    case 'too_big': {
      const bound = issue.code === 'too_small' ? `at least ${issue.minimum}` : `at most ${issue.maximum}`;
      if (issue.origin === 'string') return `must be ${bound} characters long`;
      if (issue.origin === 'array' || issue.origin === 'set') return `must have ${bound} items`;
      return `must be ${bound}`;
    }
    case 'invalid_format':
      return `must be a valid ${issue.format}`;
    default:
      return issue.message;
  }
}

/**
 * One problem as `<setting> <what it accepts>, got <value>`: the setting by the environment variable
 * that set it, else by its key path in the file.
 */
function describe(
  issue: z.core.$ZodIssue,
  raw: Record<string, unknown>,
  /** Setting path → the environment variable that set it (the last one read, for two names of one setting). */
  fromEnv: ReadonlyMap<string, string>,
): string {
  if (issue.code === 'unrecognized_keys') {
    const at = issue.path.length > 0 ? `${issue.path.join('.')}.` : '';
    return `${issue.keys.map((k) => at + k).join(', ')}: unknown setting`;
  }
  // An environment variable sets a whole setting; a problem inside it (a list item) is the variable's.
  const set = [...fromEnv.keys()].find((path) => {
    const joined = issue.path.join('.');
    return joined === path || joined.startsWith(`${path}.`);
  });
  const variable = set === undefined ? undefined : fromEnv.get(set);
  const name = variable ?? (issue.path.length > 0 ? issue.path.join('.') : 'the configuration');
  const value = set === undefined ? valueAt(raw, issue.path) : valueAt(raw, set.split('.'));
  const key = (set === undefined ? issue.path : set.split('.')).at(-1);
  const accepts = acceptedBy(issue);
  if (value === undefined && issue.code !== 'custom') return `${name} is required; it ${accepts}`;
  return `${name} ${accepts}, got ${shown(value, key)}`;
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
  const fromEnv = new Map<string, string>();
  for (const [name, path] of Object.entries(ENV)) {
    const value = env[name];
    if (value !== undefined && value !== '') {
      setPath(raw, path, value);
      fromEnv.set(path.join('.'), name);
    }
  }
  for (const [key, value] of Object.entries(options.overrides ?? {})) raw[key] = value;
  // Not set: the issuer follows the address idgate listens on (`localhost` for every interface).
  if (raw.issuer === undefined) {
    const derived = derivedIssuer(raw.host, raw.port);
    if (derived !== undefined) raw.issuer = derived;
  }
  const result = ConfigSchema.safeParse(raw);
  if (!result.success)
    throw new ConfigError(result.error.issues.map((issue) => describe(issue, raw, fromEnv)));
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
  const { revalidateInterval, revalidateMaxStaleness } = result.data.federation;
  if (revalidateInterval > 0 && revalidateMaxStaleness > 0 && revalidateMaxStaleness < revalidateInterval)
    conflicts.push(
      `federation.revalidateMaxStaleness: must be 0 (no limit) or at least federation.revalidateInterval (${revalidateInterval}): a shorter limit would have grants re-checked more often than the interval says, and ended by the first re-check their provider does not answer`,
    );
  const names = result.data.identityProviders.map((provider) => provider.name);
  const repeated = names.filter((name, i) => names.indexOf(name) !== i);
  if (repeated.length > 0)
    conflicts.push(`identityProviders: ${[...new Set(repeated)].join(', ')} declared more than once`);
  if (conflicts.length > 0) throw new ConfigError(conflicts);
  return result.data;
}

/** Hosts that mean "this machine, every interface or loopback": the issuer names them `localhost`. */
const LOCAL_HOSTS = new Set(['0.0.0.0', '::', '127.0.0.1', '::1', 'localhost']);

/**
 * The issuer of a server whose issuer is not set, on `host` and `port` as given (raw, before
 * validation): `http://localhost:PORT/oauth`, or the host's own name when it listens on one
 * address only. Undefined when the port is not a usable number (validation then says why), or 0
 * (chosen at listen: the default issuer stays).
 */
function derivedIssuer(host: unknown, port: unknown): string | undefined {
  const number = typeof port === 'string' && /^\d{1,5}$/.test(port) ? Number(port) : port;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < 1 || number > 65_535)
    return undefined;
  const name = typeof host === 'string' && host !== '' && !LOCAL_HOSTS.has(host) ? host : 'localhost';
  return `http://${isIP(name) === 6 ? `[${name}]` : name}:${number}/oauth`;
}

/**
 * `IDGATE_*` variables that other programs of idgate read (the kubectl plugin, the bench, the test
 * suite: every `IDGATE_TEST_*`), so the server does not warn about them.
 */
const OTHER_PROGRAMS_VARIABLES = new Set([
  'IDGATE_CONFIG',
  'IDGATE_KUBECTL_NOW',
  'IDGATE_CHROMIUM',
  'IDGATE_NODE_FLAGS',
  'IDGATE_MALLOC_ENV',
  'IDGATE_BIN',
  'IDGATE_DEBUG',
  'IDGATE_VARIABLES',
  'IDGATE_API_KEY',
  'IDGATE_ADMIN_KEY',
]);

/** The edit distance between `a` and `b` (insertions, deletions, substitutions). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    previous = current;
  }
  return previous[b.length] as number;
}

/**
 * What the server should warn about at start, one sentence each: `IDGATE_*` variables it does not
 * read (a typo is otherwise silently ignored), each with the closest variable it does read; and an
 * issuer on this machine whose port is not the one idgate listens on (clients would be sent to
 * the wrong place).
 * @example configWarnings(config, { IDGATE_PROT: '9000' }) // ['IDGATE_PROT is not a setting idgate reads (did you mean IDGATE_PORT?)']
 */
export function configWarnings(
  config: Pick<IdgateConfig, 'issuer' | 'port'>,
  env: NodeJS.ProcessEnv,
): string[] {
  const warnings: string[] = [];
  const known = Object.keys(ENV).filter((name) => name.startsWith('IDGATE_'));
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('IDGATE_') || name in ENV || OTHER_PROGRAMS_VARIABLES.has(name)) continue;
    // Test settings, and secrets that declarations name for the admin API (`{ env: IDGATE_DECLARED_… }`).
    if (name.startsWith('IDGATE_TEST_') || name.startsWith('IDGATE_DECLARED_')) continue;
    let closest = '';
    let nearest = Number.POSITIVE_INFINITY;
    for (const candidate of known) {
      const distance = editDistance(name, candidate);
      if (distance < nearest) [closest, nearest] = [candidate, distance];
    }
    warnings.push(`${name} is not a setting idgate reads (did you mean ${closest}?); it is ignored`);
  }
  const issuer = new URL(config.issuer);
  const issuerPort = Number(issuer.port || (issuer.protocol === 'https:' ? 443 : 80));
  if (isLoopbackHost(issuer.hostname) && config.port !== 0 && issuerPort !== config.port)
    warnings.push(
      `the issuer ${config.issuer} names port ${issuerPort} on this machine, but idgate listens on port ${config.port}: clients will be sent to the wrong address; set IDGATE_ISSUER (issuer) to the address clients reach, or leave it unset to follow the port`,
    );
  return warnings;
}

/** The base URL the issuer lives under: the issuer without its trailing `/oauth`. */
export function baseUrlOf(config: Pick<IdgateConfig, 'issuer'>): string {
  return config.issuer.slice(0, -'/oauth'.length);
}
