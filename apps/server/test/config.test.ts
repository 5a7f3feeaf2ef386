import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { dataDirectory, resolveSecret } from '../src/services.js';

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
    expect(found).toHaveLength(6);
    expect(found.some((p) => p.startsWith('IDGATE_ISSUER: must be an http(s) URL'))).toBe(true);
    expect(found.some((p) => p.startsWith('IDGATE_SIGNING_ALGORITHM:'))).toBe(true);
    expect(found.some((p) => p.startsWith('IDGATE_TRUST_PROXY:'))).toBe(true);
    expect(found.some((p) => p.startsWith('port:'))).toBe(true);
    expect(found.some((p) => p.startsWith('log.level:'))).toBe(true);
    expect(found).toContain('colour: unknown setting');
  });

  it.each([
    ['IDGATE_PORT', 'abc'],
    ['IDGATE_PORT', '-1'],
    ['IDGATE_ISSUER', 'http://localhost:8080/'],
    ['IDGATE_ISSUER', 'http://localhost:8080/oauth?x=1'],
    ['IDGATE_SECRET', 'too-short'],
    ['IDGATE_BODY_LIMIT', '10'],
    ['IDGATE_DATABASE_CONNECT_TIMEOUT', '0'],
    ['IDGATE_DATABASE_STATEMENT_TIMEOUT', 'soon'],
    ['IDGATE_DATABASE_BUSY_TIMEOUT', '-1'],
    ['IDGATE_DATABASE_KEEPALIVE', '7200'],
    ['IDGATE_CACHE_MAX_STALENESS', '1.5'],
  ])('refuses %s=%s', (name, value) => {
    const found = problems(() => loadConfig({ env: { [name]: value } }));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(new RegExp(`^${name}: `));
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

  it('refuses a secret and a secret file together', () => {
    expect(
      problems(() => loadConfig({ env: { IDGATE_SECRET: 'x'.repeat(32), IDGATE_SECRET_FILE: '/tmp/s' } })),
    ).toEqual(['secret, secretFile: set only one of them']);
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
