import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_ENVIRONMENT, ConfigError, configWarnings, loadConfig } from '../src/config.js';
import { dataDirectory, resolveSecret } from '../src/services.js';
import { tracesUrl } from '../src/telemetry/tracing.js';
import { readDoc } from './helpers/docs.js';

const TRUST_PROXY =
  'must be false, a number of proxies from 1 to 10, or a comma-separated list of proxy IP addresses or CIDR ranges';

function problems(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

function yamlFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'idgate-config-')), 'idgate.yaml');
  writeFileSync(file, text);
  return file;
}

describe('configuration', () => {
  it('has defaults that start on SQLite at localhost:8080', () => {
    const config = loadConfig({ env: {} });
    expect(config).toMatchObject({
      host: '0.0.0.0',
      port: 8080,
      issuer: 'http://localhost:8080/oauth',
      database: { url: 'sqlite:./data/idgate.db' },
      signing: { algorithm: 'RS256' },
      log: { level: 'info' },
    });
  });

  it('reads the YAML file and lets the environment override it', () => {
    const file = yamlFile(
      'port: 9000\nissuer: https://id.example.com/oauth/\nsigning:\n  algorithm: ES256\n',
    );
    const config = loadConfig({
      file,
      env: { IDGATE_PORT: '9100', IDGATE_DATABASE_URL: 'postgres://db/idgate' },
    });
    expect(config.port).toBe(9100);
    expect(config.issuer).toBe('https://id.example.com/oauth');
    expect(config.signing.algorithm).toBe('ES256');
    expect(config.database.url).toBe('postgres://db/idgate');
    expect(loadConfig({ env: { IDGATE_CONFIG: file } }).port).toBe(9000);
  });

  it('signs out of one application by default; true and false still mean all grants and none', () => {
    expect(loadConfig({ env: {} }).logout.revokeGrants).toBe('client');
    const logout = (value: string) =>
      loadConfig({ file: yamlFile(`logout:\n  revokeGrants: ${value}\n`), env: {} }).logout.revokeGrants;
    expect(logout('all')).toBe('all');
    expect(logout('none')).toBe('none');
    expect(logout('true')).toBe('all');
    expect(logout('false')).toBe('none');
    expect(() => logout('some')).toThrow(ConfigError);
  });

  it('reports every bad setting, each by the name the operator used', () => {
    const file = yamlFile('port: 70000\nlog:\n  level: loud\ncolour: blue\n');
    const found = problems(() =>
      loadConfig({
        file,
        env: {
          IDGATE_ISSUER: 'ftp://id.example.com/oauth',
          IDGATE_SIGNING_ALGORITHM: 'HS256',
          IDGATE_TRUST_PROXY: 'maybe',
        },
      }),
    );
    expect(found.sort()).toEqual([
      'IDGATE_ISSUER must be an http(s) URL, got "ftp://id.example.com/oauth"',
      'IDGATE_SIGNING_ALGORITHM must be one of RS256, ES256, EdDSA, got "HS256"',
      `IDGATE_TRUST_PROXY ${TRUST_PROXY}, got "maybe"`,
      'colour: unknown setting',
      'log.level must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
      'port must be a port number 0–65535, got 70000',
    ]);
  });

  // Every variable the server reads, with a bad value and the exact problem: the variable, what it
  // accepts, and what it got (never a secret's value).
  const ENV_PROBLEMS: ReadonlyArray<readonly [name: string, value: string, problem: string]> = [
    ['IDGATE_PORT', 'eighty', 'IDGATE_PORT must be a port number 0–65535, got "eighty"'],
    ['IDGATE_PORT', '-1', 'IDGATE_PORT must be a port number 0–65535, got "-1"'],
    ['IDGATE_PORT', '80.5', 'IDGATE_PORT must be a port number 0–65535, got "80.5"'],
    ['IDGATE_ISSUER', 'ftp://x/oauth', 'IDGATE_ISSUER must be an http(s) URL, got "ftp://x/oauth"'],
    [
      'IDGATE_ISSUER',
      'http://localhost:8080/',
      'IDGATE_ISSUER must end with /oauth: the issuer is {base_url}/oauth, got "http://localhost:8080/"',
    ],
    [
      'IDGATE_ISSUER',
      'http://localhost:8080/oauth?x=1',
      'IDGATE_ISSUER must not have a query or fragment (OIDC Discovery §3), got "http://localhost:8080/oauth?x=1"',
    ],
    [
      'IDGATE_SECRET',
      'too-short',
      'IDGATE_SECRET must be at least 32 characters, got a value of 9 characters',
    ],
    [
      'IDGATE_SIGNING_ALGORITHM',
      'HS256',
      'IDGATE_SIGNING_ALGORITHM must be one of RS256, ES256, EdDSA, got "HS256"',
    ],
    [
      'IDGATE_KEY_ACTIVATION_DELAY',
      'soon',
      'IDGATE_KEY_ACTIVATION_DELAY must be a whole number of seconds 0–3600, or a number with a unit s, m, h or d (15m), got "soon"',
    ],
    [
      'IDGATE_ACCESS_TOKEN_TTL',
      '0',
      'IDGATE_ACCESS_TOKEN_TTL must be a whole number of seconds 1–31536000, or a number with a unit s, m, h or d (15m), got "0"',
    ],
    [
      'IDGATE_ID_TOKEN_TTL',
      '1.5h',
      'IDGATE_ID_TOKEN_TTL must be a whole number of seconds 1–31536000, or a number with a unit s, m, h or d (15m), got "1.5h"',
    ],
    [
      'IDGATE_SESSION_TTL',
      '99999999999',
      'IDGATE_SESSION_TTL must be a whole number of seconds 1–31536000, or a number with a unit s, m, h or d (15m), got "99999999999"',
    ],
    [
      'IDGATE_DEVICE_CODE_TTL',
      '30',
      'IDGATE_DEVICE_CODE_TTL must be a whole number of seconds 60–86400, or a number with a unit s, m, h or d (15m), got "30"',
    ],
    [
      'IDGATE_DEVICE_POLL_INTERVAL',
      '0',
      'IDGATE_DEVICE_POLL_INTERVAL must be a whole number of seconds 1–300, or a number with a unit s, m, h or d (15m), got "0"',
    ],
    [
      'IDGATE_PURGE_INTERVAL',
      'hourly',
      'IDGATE_PURGE_INTERVAL must be a whole number of seconds 0–604800, or a number with a unit s, m, h or d (15m), got "hourly"',
    ],
    ['IDGATE_LOGIN_MAX_FAILURES', '0', 'IDGATE_LOGIN_MAX_FAILURES must be a whole number 1–1000, got "0"'],
    [
      'IDGATE_LOGIN_WINDOW',
      '15 minutes',
      'IDGATE_LOGIN_WINDOW must be a whole number of seconds 1–31536000, or a number with a unit s, m, h or d (15m), got "15 minutes"',
    ],
    [
      'IDGATE_DEVICE_MAX_WRONG_CODES',
      'many',
      'IDGATE_DEVICE_MAX_WRONG_CODES must be a whole number 1–1000000, got "many"',
    ],
    [
      'IDGATE_LOG_LEVEL',
      'loud',
      'IDGATE_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    ],
    ['IDGATE_TRUST_PROXY', 'maybe', `IDGATE_TRUST_PROXY ${TRUST_PROXY}, got "maybe"`],
    ['IDGATE_TRUST_PROXY', '11', 'IDGATE_TRUST_PROXY must be a number of proxies 1–10, got "11"'],
    ['IDGATE_BODY_LIMIT', '10', 'IDGATE_BODY_LIMIT must be a number of bytes 1024–10485760, got "10"'],
    [
      'IDGATE_REFRESH_TOKEN_TTL',
      '0',
      'IDGATE_REFRESH_TOKEN_TTL must be a whole number of seconds 1–31536000, or a number with a unit s, m, h or d (15m), got "0"',
    ],
    [
      'IDGATE_MAX_ACCESS_TOKEN_TTL',
      '1y',
      'IDGATE_MAX_ACCESS_TOKEN_TTL must be a whole number of seconds 1–31536000, or a number with a unit s, m, h or d (15m), got "1y"',
    ],
    [
      'IDGATE_GRANT_TTL',
      'long',
      'IDGATE_GRANT_TTL must be a whole number of seconds 1–31536000, or a number with a unit s, m, h or d (15m), got "long"',
    ],
    [
      'IDGATE_REFRESH_FOR_TRUSTED_CLIENTS',
      'perhaps',
      'IDGATE_REFRESH_FOR_TRUSTED_CLIENTS must be true or false, got "perhaps"',
    ],
    [
      'IDGATE_LOGIN_MAX_FAILURES_PER_ADDRESS',
      '0',
      'IDGATE_LOGIN_MAX_FAILURES_PER_ADDRESS must be a whole number 1–100000, got "0"',
    ],
    [
      'IDGATE_LOGIN_MAX_FAILURES_PER_CLIENT',
      'lots',
      'IDGATE_LOGIN_MAX_FAILURES_PER_CLIENT must be a whole number 1–1000000, got "lots"',
    ],
    [
      'IDGATE_LOGOUT_REVOKE_GRANTS',
      'some',
      'IDGATE_LOGOUT_REVOKE_GRANTS must be one of client, all, none, got "some"',
    ],
    ['IDGATE_PKCE_ALLOW_PLAIN', 'maybe', 'IDGATE_PKCE_ALLOW_PLAIN must be true or false, got "maybe"'],
    [
      'IDGATE_PKCE_REQUIRE_FOR_CONFIDENTIAL_CLIENTS',
      '2',
      'IDGATE_PKCE_REQUIRE_FOR_CONFIDENTIAL_CLIENTS must be true or false, got "2"',
    ],
    ['IDGATE_UI_PRODUCT_NAME', ' ', 'IDGATE_UI_PRODUCT_NAME must be a name of 1–64 characters, got " "'],
    [
      'IDGATE_UI_LOGO_FILE',
      'logo.bmp',
      'IDGATE_UI_LOGO_FILE must be a png, svg, jpg, jpeg, webp, gif file, got "logo.bmp"',
    ],
    ['IDGATE_UI_PRIMARY_COLOR', 'red', 'IDGATE_UI_PRIMARY_COLOR must be a colour #rgb or #rrggbb, got "red"'],
    [
      'IDGATE_UI_BACKGROUND_COLOR',
      '#12345',
      'IDGATE_UI_BACKGROUND_COLOR must be a colour #rgb or #rrggbb, got "#12345"',
    ],
    ['IDGATE_UI_DEFAULT_LOCALE', 'fr', 'IDGATE_UI_DEFAULT_LOCALE must be one of en, de, got "fr"'],
    [
      'IDGATE_DECLARATIONS_PRUNE',
      'sometimes',
      'IDGATE_DECLARATIONS_PRUNE must be true or false, got "sometimes"',
    ],
    [
      'IDGATE_DECLARATIONS_MANAGER',
      'Team B',
      'IDGATE_DECLARATIONS_MANAGER must be 1 to 63 lower-case letters, digits and . _ -, got "Team B"',
    ],
    [
      'IDGATE_DATABASE_CONNECT_TIMEOUT',
      '0',
      'IDGATE_DATABASE_CONNECT_TIMEOUT must be a number of seconds 0.001–600, got "0"',
    ],
    [
      'IDGATE_DATABASE_STATEMENT_TIMEOUT',
      'soon',
      'IDGATE_DATABASE_STATEMENT_TIMEOUT must be a number of seconds 0.001–600, got "soon"',
    ],
    [
      'IDGATE_DATABASE_QUERY_TIMEOUT',
      '601',
      'IDGATE_DATABASE_QUERY_TIMEOUT must be a number of seconds 0.001–600, got "601"',
    ],
    [
      'IDGATE_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT',
      '-1',
      'IDGATE_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT must be a number of seconds 0.001–600, got "-1"',
    ],
    [
      'IDGATE_DATABASE_KEEPALIVE',
      '7200',
      'IDGATE_DATABASE_KEEPALIVE must be a number of seconds 0–3600 (0: no keepalive), got "7200"',
    ],
    [
      'IDGATE_DATABASE_BUSY_TIMEOUT',
      'never',
      'IDGATE_DATABASE_BUSY_TIMEOUT must be a number of seconds 0.001–600, got "never"',
    ],
    [
      'IDGATE_DATABASE_HEARTBEAT_TIMEOUT',
      '0',
      'IDGATE_DATABASE_HEARTBEAT_TIMEOUT must be a number of seconds 0.001–600, got "0"',
    ],
    [
      'IDGATE_CACHE_MAX_STALENESS',
      '1.5',
      'IDGATE_CACHE_MAX_STALENESS must be a whole number of seconds 0–31536000, or a number with a unit s, m, h or d (15m), got "1.5"',
    ],
    [
      'IDGATE_REFRESH_REUSE_WINDOW',
      '301',
      'IDGATE_REFRESH_REUSE_WINDOW must be a whole number of seconds 0–300, or a number with a unit s, m, h or d (15m), got "301"',
    ],
    [
      'IDGATE_PASSWORD_MIN_LENGTH',
      '6',
      'IDGATE_PASSWORD_MIN_LENGTH must be a password length 8–256, got "6"',
    ],
    [
      'IDGATE_UPSTREAM_REVALIDATE_INTERVAL',
      '15min',
      'IDGATE_UPSTREAM_REVALIDATE_INTERVAL must be a whole number of seconds 0–31536000, or a number with a unit s, m, h or d (15m), got "15min"',
    ],
    [
      'IDGATE_UPSTREAM_REVALIDATE_MAX_STALENESS',
      '-1',
      'IDGATE_UPSTREAM_REVALIDATE_MAX_STALENESS must be a whole number of seconds 0–31536000, or a number with a unit s, m, h or d (15m), got "-1"',
    ],
    [
      'IDGATE_OTEL_ENDPOINT',
      'collector:4318',
      'IDGATE_OTEL_ENDPOINT must be an http(s) URL, got "collector:4318"',
    ],
    [
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'grpc://collector:4317',
      'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL, got "grpc://collector:4317"',
    ],
    [
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
      'https://user:pw@collector/v1/traces',
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must not hold a user or password: give credentials as OTEL_EXPORTER_OTLP_HEADERS, got "https://user:pw@collector/v1/traces"',
    ],
    [
      'OTEL_EXPORTER_OTLP_PROTOCOL',
      'grpc',
      'OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/protobuf, http/json, got "grpc"',
    ],
    [
      'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
      'http',
      'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be one of http/protobuf, http/json, got "http"',
    ],
    ['OTEL_SERVICE_NAME', ' ', 'OTEL_SERVICE_NAME must be a service name, got " "'],
    [
      'OTEL_TRACES_SAMPLER',
      'sometimes',
      'OTEL_TRACES_SAMPLER must be one of parentbased_always_on, parentbased_always_off, parentbased_traceidratio, always_on, always_off, traceidratio, got "sometimes"',
    ],
    ['OTEL_TRACES_SAMPLER_ARG', '1.5', 'OTEL_TRACES_SAMPLER_ARG must be a sampling ratio 0–1, got "1.5"'],
    [
      'IDGATE_AUDIT_PERSONAL_DATA',
      'scramble',
      'IDGATE_AUDIT_PERSONAL_DATA must be one of keep, hash, omit, got "scramble"',
    ],
    [
      'IDGATE_AUDIT_RETENTION',
      'a while',
      'IDGATE_AUDIT_RETENTION must be a whole number of seconds, a number with a unit s, m, h or d (90d), or 0 / forever to keep every event, got "a while"',
    ],
    [
      'IDGATE_AUDIT_TOKEN_REVIEW',
      'sampled',
      'IDGATE_AUDIT_TOKEN_REVIEW must be one of off, aggregated, all, got "sampled"',
    ],
    [
      'IDGATE_AUDIT_TOKEN_REVIEW_INTERVAL',
      '0',
      'IDGATE_AUDIT_TOKEN_REVIEW_INTERVAL must be a whole number of seconds 1–3600, or a number with a unit s, m, h or d (15m), got "0"',
    ],
    [
      'IDGATE_AUDIT_STREAM_POLL_INTERVAL',
      '0.5',
      'IDGATE_AUDIT_STREAM_POLL_INTERVAL must be a whole number of seconds 1–60, or a number with a unit s, m, h or d (15m), got "0.5"',
    ],
    [
      'IDGATE_AUDIT_STREAM_WINDOW',
      '0',
      'IDGATE_AUDIT_STREAM_WINDOW must be a whole number of seconds 1–7200, or a number with a unit s, m, h or d (15m), got "0"',
    ],
    [
      'IDGATE_AUDIT_STREAM_HEARTBEAT',
      'often',
      'IDGATE_AUDIT_STREAM_HEARTBEAT must be a whole number of seconds 1–300, or a number with a unit s, m, h or d (15m), got "often"',
    ],
    [
      'IDGATE_AUDIT_STREAM_MAX_PER_KEY',
      '0',
      'IDGATE_AUDIT_STREAM_MAX_PER_KEY must be a number of streams 1–10000, got "0"',
    ],
    [
      'IDGATE_AUDIT_STREAM_MAX_PER_PROCESS',
      'many',
      'IDGATE_AUDIT_STREAM_MAX_PER_PROCESS must be a number of streams 1–100000, got "many"',
    ],
    [
      'IDGATE_AUDIT_STREAM_MAX_BUFFERED',
      '1024',
      'IDGATE_AUDIT_STREAM_MAX_BUFFERED must be a number of bytes 65536–67108864, got "1024"',
    ],
    [
      'IDGATE_AUDIT_STREAM_MAX_LIFETIME',
      '2w',
      'IDGATE_AUDIT_STREAM_MAX_LIFETIME must be a whole number of seconds 10–86400, or a number with a unit s, m, h or d (15m), got "2w"',
    ],
    [
      'IDGATE_AUDIT_STREAM_IDLE_TIMEOUT',
      '2h',
      'IDGATE_AUDIT_STREAM_IDLE_TIMEOUT must be a whole number of seconds 5–3600, or a number with a unit s, m, h or d (15m), got "2h"',
    ],
  ];

  it('reads audit.retention as seconds, a duration, or 0 / forever for keeping every event', () => {
    expect(loadConfig({ env: {} }).audit).toEqual({
      personalData: 'keep',
      log: 'off',
      retention: 7_776_000,
      tokenReview: 'aggregated',
      tokenReviewInterval: 60,
      stream: {
        pollInterval: 1,
        heartbeat: 15,
        maxPerKey: 5,
        maxPerProcess: 100,
        maxBuffered: 1_048_576,
        maxLifetime: 900,
        idleTimeout: 60,
      },
    });
    for (const [value, seconds] of [
      ['30d', 2_592_000],
      ['3600', 3600],
      ['0', 0],
      ['forever', 0],
    ] as const)
      expect(loadConfig({ env: { IDGATE_AUDIT_RETENTION: value } }).audit.retention).toBe(seconds);
  });

  it('reads the live tail bounds, durations with units as retention does', () => {
    const { stream } = loadConfig({
      env: { IDGATE_AUDIT_STREAM_MAX_LIFETIME: '30m', IDGATE_AUDIT_STREAM_IDLE_TIMEOUT: '90' },
    }).audit;
    expect([stream.maxLifetime, stream.idleTimeout]).toEqual([1800, 90]);
    expect(
      loadConfig({ env: {}, overrides: { audit: { stream: { maxLifetime: '1h' } } } }).audit.stream
        .maxLifetime,
    ).toBe(3600);
  });

  it.each(ENV_PROBLEMS)(
    'refuses %s=%s, naming the variable, what it accepts and what it got',
    (name, value, problem) => {
      expect(problems(() => loadConfig({ env: { [name]: value } }))).toEqual([problem]);
    },
  );

  it('has a bad value in the table above for every variable it reads (but the free-form ones)', () => {
    // Any non-empty host, database URL (checked when opened), secret file path, audit log
    // target (off, stdout, stderr or a path, opened at start) and declarations path (read at
    // start) is taken as given.
    const freeForm = [
      'IDGATE_HOST',
      'IDGATE_DATABASE_URL',
      'IDGATE_SECRET_FILE',
      'IDGATE_AUDIT_LOG',
      'IDGATE_FEDERATION_TOKEN_CLIENT_ID',
      'IDGATE_DECLARATIONS',
    ];
    const tested = new Set(ENV_PROBLEMS.map(([name]) => name));
    expect(
      Object.keys(CONFIG_ENVIRONMENT).filter((name) => !tested.has(name) && !freeForm.includes(name)),
    ).toEqual([]);
  });

  it.each([
    ['port: 70000\n', 'port must be a port number 0–65535, got 70000'],
    [
      'tokens:\n  accessTokenTtl: abc\n',
      'tokens.accessTokenTtl must be a whole number of seconds 1–31536000, or a number with a unit s, m, h or d (15m), got "abc"',
    ],
    [
      'tokens:\n  refreshForTrustedClients: maybe\n',
      'tokens.refreshForTrustedClients must be true or false, got "maybe"',
    ],
    ['pkce:\n  allowPlain: 2\n', 'pkce.allowPlain must be true or false, got 2'],
    ['logout:\n  revokeGrants: some\n', 'logout.revokeGrants must be one of client, all, none, got "some"'],
    [
      'bruteForce:\n  maxFailuresPerAddress: 0\n',
      'bruteForce.maxFailuresPerAddress must be a whole number 1–100000, got 0',
    ],
    ['database: sqlite:x.db\n', 'database must be a mapping of settings, got "sqlite:x.db"'],
    [
      'database:\n  url: ""\n',
      'database.url must be a database URL: sqlite:PATH or postgres://USER:PASSWORD@HOST:PORT/DATABASE, got a value of 0 characters',
    ],
    ['host: ""\n', 'host must be a host name or IP address, got ""'],
    ['federation:\n  tokenClientId: 5\n', 'federation.tokenClientId must be a client id, got 5'],
    ['identityProviders: github\n', 'identityProviders must be a list of identity providers, got "github"'],
    [
      'identityProviders:\n  - name: x\n',
      'identityProviders.0.type is required; it must be one of oidc, github, gitlab, ldap',
    ],
    [
      'trustProxy: true\n',
      'trustProxy must not be true: that would believe any X-Forwarded-For, so a client could choose its own address and dodge the per-address sign-in limits: give the number of proxies in front of idgate (1 for an ingress) or their addresses/CIDR ranges, got true',
    ],
  ])('names a bad setting in the file by its key path: %j', (text, problem) => {
    expect(problems(() => loadConfig({ file: yamlFile(text), env: {} }))).toEqual([problem]);
  });

  it("takes an OIDC provider's trustUpstreamMfa from the file, and names a bad value by its key path", () => {
    const provider = [
      'identityProviders:',
      '  - type: oidc',
      '    name: corp',
      '    issuer: https://sso.example.com',
      '    clientId: idgate',
      '    clientSecret: s3cret',
    ].join('\n');
    const trusted = loadConfig({
      file: yamlFile(`${provider}\n    trustUpstreamMfa: [mfa, hwk]\n`),
      env: {},
    });
    expect(trusted.identityProviders[0]).toMatchObject({ trustUpstreamMfa: ['mfa', 'hwk'] });
    expect(loadConfig({ file: yamlFile(`${provider}\n`), env: {} }).identityProviders[0]).toMatchObject({
      trustUpstreamMfa: [],
    });
    const bad = () => loadConfig({ file: yamlFile(`${provider}\n    trustUpstreamMfa: ['a b']\n`), env: {} });
    expect(problems(bad)[0]).toContain('identityProviders.0.trustUpstreamMfa.0');
  });

  it('bounds every wait on the database: defaults, environment, and a query timeout no shorter than the statement timeout', () => {
    expect(loadConfig({ env: {} }).database).toEqual({
      url: 'sqlite:./data/idgate.db',
      connectTimeout: 5,
      statementTimeout: 10,
      queryTimeout: 12,
      idleInTransactionTimeout: 30,
      keepAlive: 10,
      busyTimeout: 5,
      heartbeatTimeout: 1,
    });
    expect(loadConfig({ env: {} }).cache.maxStaleness).toBe(0);
    const set = loadConfig({
      env: {
        IDGATE_DATABASE_CONNECT_TIMEOUT: '2',
        IDGATE_DATABASE_STATEMENT_TIMEOUT: '0.5',
        IDGATE_DATABASE_QUERY_TIMEOUT: '3',
        IDGATE_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT: '20',
        IDGATE_DATABASE_KEEPALIVE: '0',
        IDGATE_DATABASE_BUSY_TIMEOUT: '0.25',
        IDGATE_DATABASE_HEARTBEAT_TIMEOUT: '0.2',
        IDGATE_CACHE_MAX_STALENESS: '300',
      },
    });
    expect(set.database).toMatchObject({
      connectTimeout: 2,
      statementTimeout: 0.5,
      queryTimeout: 3,
      idleInTransactionTimeout: 20,
      keepAlive: 0,
      busyTimeout: 0.25,
      heartbeatTimeout: 0.2,
    });
    expect(
      loadConfig({ file: yamlFile('database:\n  heartbeatTimeout: 2.5\n'), env: {} }).database,
    ).toMatchObject({
      heartbeatTimeout: 2.5,
    });
    expect(set.cache.maxStaleness).toBe(300);
    expect(problems(() => loadConfig({ env: { IDGATE_DATABASE_QUERY_TIMEOUT: '5' } }))).toEqual([
      'database.queryTimeout: must be at least database.statementTimeout (10), so the server cancels a slow statement before the client gives up on it',
    ]);
  });

  it('names the file when it cannot be read or parsed', () => {
    expect(problems(() => loadConfig({ file: '/nonexistent/idgate.yaml', env: {} }))[0]).toMatch(
      /config file \/nonexistent\/idgate.yaml: cannot be read/,
    );
    expect(problems(() => loadConfig({ file: yamlFile('port: [1\n'), env: {} }))[0]).toMatch(
      /not valid YAML/,
    );
    expect(problems(() => loadConfig({ file: yamlFile('- a\n- b\n'), env: {} }))[0]).toMatch(
      /must be a mapping/,
    );
  });

  it('refuses token lifetimes beyond the maximum', () => {
    expect(problems(() => loadConfig({ env: { IDGATE_ACCESS_TOKEN_TTL: '90000' } }))).toEqual([
      'tokens.accessTokenTtl: must not exceed tokens.maxAccessTokenTtl (86400)',
    ]);
  });

  it('bounds how long a federated grant refreshes unconfirmed: a day by default, never shorter than the re-check interval', () => {
    expect(loadConfig({ env: {} }).federation).toEqual({
      revalidateInterval: 900,
      revalidateMaxStaleness: 86_400,
    });
    const env = { IDGATE_UPSTREAM_REVALIDATE_MAX_STALENESS: '3600' };
    expect(loadConfig({ env }).federation.revalidateMaxStaleness).toBe(3600);
    const file = yamlFile('federation:\n  revalidateInterval: 600\n  revalidateMaxStaleness: 600\n');
    expect(loadConfig({ file, env: {} }).federation).toMatchObject({ revalidateMaxStaleness: 600 });
    // 0: no limit, whatever the interval; with re-checks off, the limit has nothing to count.
    expect(loadConfig({ env: { IDGATE_UPSTREAM_REVALIDATE_MAX_STALENESS: '0' } }).federation).toMatchObject({
      revalidateMaxStaleness: 0,
    });
    expect(
      loadConfig({
        env: { IDGATE_UPSTREAM_REVALIDATE_INTERVAL: '0', IDGATE_UPSTREAM_REVALIDATE_MAX_STALENESS: '60' },
      }).federation,
    ).toEqual({ revalidateInterval: 0, revalidateMaxStaleness: 60 });
    expect(problems(() => loadConfig({ env: { IDGATE_UPSTREAM_REVALIDATE_MAX_STALENESS: '899' } }))).toEqual([
      'federation.revalidateMaxStaleness: must be 0 (no limit) or at least federation.revalidateInterval (900): a shorter limit would have grants re-checked more often than the interval says, and ended by the first re-check their provider does not answer',
    ]);
  });

  it('refuses a secret and a secret file together', () => {
    expect(
      problems(() => loadConfig({ env: { IDGATE_SECRET: 'x'.repeat(32), IDGATE_SECRET_FILE: '/tmp/s' } })),
    ).toEqual(['secret, secretFile: set only one of them']);
  });
});

describe('the settings table of docs/operating/configuration.md', () => {
  const rows = readDoc('docs/operating/configuration.md')
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => line.split('|').map((cell) => cell.trim()));
  const named = (cell: string | undefined) => [...(cell ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]);

  it('names every environment variable on the row of the setting it sets', () => {
    const missing = Object.entries(CONFIG_ENVIRONMENT)
      .map(([variable, path]) => [variable, path.join('.')] as const)
      .filter(
        ([variable, setting]) =>
          !rows.some((row) => named(row[1]).includes(setting) && named(row[2]).includes(variable)),
      );
    expect(missing).toEqual([]);
  });

  it('names every setting that has a default', () => {
    const leaves = (value: unknown, path: string): string[] =>
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? Object.entries(value).flatMap(([key, child]) => leaves(child, path === '' ? key : `${path}.${key}`))
        : [path];
    const settings = leaves(loadConfig({ env: {} }), '');
    expect(settings).toContain('federation.revalidateMaxStaleness');
    expect(settings.filter((setting) => !rows.some((row) => named(row[1]).includes(setting)))).toEqual([]);
  });
});

describe('the key-sealing secret', () => {
  it('is generated once into the data folder, mode 0600, with a warning', () => {
    const dir = mkdtempSync(join(tmpdir(), 'idgate-data-'));
    const config = loadConfig({ env: { IDGATE_DATABASE_URL: `sqlite:${dir}/idgate.db` } });
    expect(dataDirectory(config.database.url)).toBe(dir);
    const warnings: string[] = [];
    const logger = { warn: (m: string) => warnings.push(m), info: () => {} };
    const first = resolveSecret(config, logger);
    expect(first).toHaveLength(43);
    expect(readFileSync(join(dir, 'secret'), 'utf8').trim()).toBe(first);
    expect(statSync(join(dir, 'secret')).mode & 0o777).toBe(0o600);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('IDGATE_SECRET');
    expect(warnings[0]).not.toContain(first);
    expect(resolveSecret(config, logger)).toBe(first);
    expect(warnings).toHaveLength(1);
  });

  it('is never generated for a shared PostgreSQL database', () => {
    const config = loadConfig({ env: { IDGATE_DATABASE_URL: 'postgres://db.internal/idgate' } });
    expect(() => resolveSecret(config, { warn: () => {}, info: () => {} })).toThrow(
      'a shared database needs a configured secret: set IDGATE_SECRET or IDGATE_SECRET_FILE',
    );
  });

  it('comes from IDGATE_SECRET_FILE when set, which must exist', () => {
    const dir = mkdtempSync(join(tmpdir(), 'idgate-data-'));
    const file = join(dir, 'mounted-secret');
    const logger = { warn: () => {}, info: () => {} };
    expect(() => resolveSecret(loadConfig({ env: { IDGATE_SECRET_FILE: file } }), logger)).toThrow(
      /does not exist/,
    );
    writeFileSync(file, `${'s'.repeat(40)}\n`);
    expect(resolveSecret(loadConfig({ env: { IDGATE_SECRET_FILE: file } }), logger)).toBe('s'.repeat(40));
  });
});

describe('OpenTelemetry settings', () => {
  const otel = (env: Record<string, string>, file?: string) => loadConfig({ env, file }).otel;

  it('is off by default, with the standard defaults once an endpoint is set', () => {
    expect(otel({})).toEqual({
      protocol: 'http/protobuf',
      serviceName: 'idgate',
      sampler: 'parentbased_always_on',
    });
    expect(tracesUrl(otel({}))).toBeUndefined();
  });

  it('sends to {endpoint}/v1/traces, or to the traces endpoint exactly as given', () => {
    expect(tracesUrl(otel({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }))).toBe(
      'http://collector:4318/v1/traces',
    );
    expect(
      tracesUrl(
        otel({
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/ingest',
        }),
      ),
    ).toBe('https://traces.example.com/ingest');
  });

  it('takes otel.endpoint from the file; IDGATE_OTEL_ENDPOINT wins over the standard variable and the file', () => {
    const file = yamlFile('otel:\n  endpoint: http://from-file:4318\n  serviceName: idgate-eu\n');
    expect(otel({}, file)).toMatchObject({ endpoint: 'http://from-file:4318', serviceName: 'idgate-eu' });
    expect(
      otel(
        { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://standard:4318', IDGATE_OTEL_ENDPOINT: 'http://idgate:4318' },
        file,
      ).endpoint,
    ).toBe('http://idgate:4318');
    expect(otel({ OTEL_SERVICE_NAME: 'idgate-us' }, file).serviceName).toBe('idgate-us');
  });

  it('reads the sampler and its ratio, and the traces protocol over the general one', () => {
    expect(
      otel({
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      }),
    ).toMatchObject({ sampler: 'parentbased_traceidratio', samplerArg: 0.25, protocol: 'http/json' });
  });

  it('names the variable that set a bad value when two variables set one setting', () => {
    expect(problems(() => loadConfig({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector' } }))).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL, got "collector"',
    ]);
    expect(problems(() => loadConfig({ file: yamlFile('otel:\n  endpoint: 4318\n'), env: {} }))).toEqual([
      'otel.endpoint must be an http(s) URL, got 4318',
    ]);
  });
});

describe('settings that behave the same everywhere', () => {
  it('take durations with units in the file and the environment alike', () => {
    const config = loadConfig({
      file: yamlFile('tokens:\n  accessTokenTtl: 15m\n  refreshTokenTtl: 30d\nsession:\n  ttl: 8h\n'),
      env: { IDGATE_GRANT_TTL: '90d', IDGATE_LOGIN_WINDOW: '900s' },
    });
    expect(config.tokens).toMatchObject({
      accessTokenTtl: 900,
      refreshTokenTtl: 2_592_000,
      grantTtl: 7_776_000,
    });
    expect(config.session.ttl).toBe(28_800);
    expect(config.bruteForce.windowSeconds).toBe(900);
  });

  it('give the settings that were file-only a variable each', () => {
    const config = loadConfig({
      env: {
        IDGATE_REFRESH_FOR_TRUSTED_CLIENTS: 'true',
        IDGATE_LOGIN_MAX_FAILURES_PER_ADDRESS: '50',
        IDGATE_LOGIN_MAX_FAILURES_PER_CLIENT: '70',
        IDGATE_LOGOUT_REVOKE_GRANTS: 'all',
        IDGATE_PKCE_ALLOW_PLAIN: 'true',
        IDGATE_PKCE_REQUIRE_FOR_CONFIDENTIAL_CLIENTS: 'true',
        IDGATE_FEDERATION_TOKEN_CLIENT_ID: 'cl_cli',
        IDGATE_MAX_ACCESS_TOKEN_TTL: '2h',
      },
    });
    expect(config.tokens).toMatchObject({ refreshForTrustedClients: true, maxAccessTokenTtl: 7200 });
    expect(config.bruteForce).toMatchObject({ maxFailuresPerAddress: 50, maxFailuresPerClient: 70 });
    expect(config.logout.revokeGrants).toBe('all');
    expect(config.pkce).toEqual({ allowPlain: true, requireForConfidentialClients: true });
    expect(config.federation.tokenClientId).toBe('cl_cli');
  });

  it.each([
    [{}, 'http://localhost:8080/oauth'],
    [{ IDGATE_PORT: '18090' }, 'http://localhost:18090/oauth'],
    [{ IDGATE_HOST: '127.0.0.1', IDGATE_PORT: '9000' }, 'http://localhost:9000/oauth'],
    [{ IDGATE_HOST: '10.1.2.3', IDGATE_PORT: '9000' }, 'http://10.1.2.3:9000/oauth'],
    [{ IDGATE_HOST: 'fd00::5', IDGATE_PORT: '9000' }, 'http://[fd00::5]:9000/oauth'],
    [{ IDGATE_PORT: '18090', IDGATE_ISSUER: 'https://id.example.com/oauth' }, 'https://id.example.com/oauth'],
  ])('has the issuer follow the listening address when it is not set: %j', (env, issuer) => {
    expect(loadConfig({ env }).issuer).toBe(issuer);
  });

  it('warns about an IDGATE_ variable it does not read, naming the closest one it does', () => {
    const env = {
      IDGATE_PROT: '9000',
      IDGATE_ACCES_TOKEN_TTL: '60',
      IDGATE_TEST_DATABASE_URL: 'x',
      IDGATE_DECLARED_CI_SECRET: 's',
      IDGATE_CONFIG: 'f',
      PATH: '/bin',
    };
    expect(configWarnings(loadConfig({ env: {} }), env)).toEqual([
      'IDGATE_ACCES_TOKEN_TTL is not a setting idgate reads (did you mean IDGATE_ACCESS_TOKEN_TTL?); it is ignored',
      'IDGATE_PROT is not a setting idgate reads (did you mean IDGATE_PORT?); it is ignored',
    ]);
  });

  it('warns when a set issuer on this machine names another port than the one idgate listens on', () => {
    const config = loadConfig({
      env: { IDGATE_PORT: '18090', IDGATE_ISSUER: 'http://localhost:8080/oauth' },
    });
    expect(configWarnings(config, {})).toEqual([
      'the issuer http://localhost:8080/oauth names port 8080 on this machine, but idgate listens on port 18090: clients will be sent to the wrong address; set IDGATE_ISSUER (issuer) to the address clients reach, or leave it unset to follow the port',
    ]);
    expect(configWarnings(loadConfig({ env: { IDGATE_PORT: '18090' } }), {})).toEqual([]);
    // Behind a proxy the issuer is another host: nothing to say.
    expect(
      configWarnings(
        loadConfig({ env: { IDGATE_PORT: '18090', IDGATE_ISSUER: 'https://id.example.com/oauth' } }),
        {},
      ),
    ).toEqual([]);
  });
});
