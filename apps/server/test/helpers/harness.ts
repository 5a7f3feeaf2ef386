import { Writable } from 'node:stream';
import type { Clock } from '@idgate/core';
import { createApiKey, createUser, registerClient } from '@idgate/core/admin';
import type { ApiKeyScope, GrantType } from '@idgate/schema';
import { type IdgateConfigInput, loadConfig } from '../../src/config.js';
import type { ComposedServer } from '../../src/serve.js';
import type { TestDatabase, TestDatabaseKind } from './databases.js';
import { seedFixtureSigningKey } from './fixture-key.js';
import { openRunOutput, registerSecret } from './run-record.js';

export const TEST_SECRET = 'integration-test-secret-0123456789abcdef';

/**
 * What the real-server helper (`startTestServer`) and the in-process one (`startTestApp`) have
 * in common: an idgate on a fresh database, everything it logged, and
 * ways to seed it.
 */
export interface TestHarness {
  /** The composed server (listening or not). */
  server: ComposedServer;
  issuer: string;
  logs: string[];
  database: TestDatabase;
  close(): Promise<void>;
  addUser(
    username: string,
    password: string,
    options?: { groups?: string[]; email?: string; displayName?: string },
  ): Promise<string>;
  addClient(options: {
    grants: GrantType[];
    trusted?: boolean;
    scopes?: string[];
    audiences?: string[];
    accessTokenTtl?: number;
    refreshTokenTtl?: number;
    redirectUris?: string[];
    postLogoutRedirectUris?: string[];
    public?: boolean;
    name?: string;
  }): Promise<{ clientId: string /** Empty for a public client. */; clientSecret: string }>;
  addApiKey(scopes: ApiKeyScope[]): Promise<string>;
}

/**
 * Composes idgate over a fresh database of `kind` with the test secret and `overrides`, capturing
 * its log lines; `compose` gets the configuration and the log stream (and decides whether to
 * listen). Whatever `compose` returns is closed, and the database dropped, by `close()`.
 * In a run with a run directory (`run-record.ts`) the log lines and the audit events (`audit.log`,
 * unless `overrides` name another) also go to files of this server's own there, and the secrets
 * it is seeded with are registered, for the secret scan at the end of the run.
 */
export async function startHarness<Server extends ComposedServer>(
  kind: TestDatabaseKind,
  settings: { issuer: string; overrides: IdgateConfigInput; clock?: Clock; freshSigningKey?: boolean },
  compose: (
    config: ReturnType<typeof loadConfig>,
    options: { logStream: Writable; clock?: Clock },
  ) => Promise<Server>,
): Promise<TestHarness & { server: Server }> {
  const database = await kind.create();
  const logs: string[] = [];
  const output = openRunOutput();
  registerSecret('server secret', TEST_SECRET, settings.overrides.secret);
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      output?.log(String(chunk));
      logs.push(
        ...String(chunk)
          .split('\n')
          .filter((line) => line !== ''),
      );
      done();
    },
  });
  let server: Server;
  try {
    // The run's fixture key (sealed with TEST_SECRET, RS256) unless the test chose its own secret,
    // algorithm or database, or asks to see the first start generate one.
    const { overrides } = settings;
    if (
      settings.freshSigningKey !== true &&
      overrides.secret === undefined &&
      overrides.secretFile === undefined &&
      overrides.signing?.algorithm === undefined &&
      overrides.database?.url === undefined
    ) {
      await seedFixtureSigningKey(database.url, settings.clock?.now() ?? Date.now());
    }
    const config = loadConfig({
      env: {},
      overrides: {
        issuer: settings.issuer,
        secret: TEST_SECRET,
        log: { level: 'info' },
        ...settings.overrides,
        ...(output === undefined ? {} : { audit: { log: output.auditFile, ...settings.overrides.audit } }),
        // Database settings (timeouts) apply to the database made here unless a URL is given.
        database: { url: database.url, ...settings.overrides.database },
      },
    });
    server = await compose(config, {
      logStream,
      ...(settings.clock === undefined ? {} : { clock: settings.clock }),
    });
  } catch (error) {
    output?.close();
    await database.drop();
    throw error;
  }
  // Seeded through core's administrative use cases, as the CLI and the admin API would.
  const { admin } = server.context;
  let counter = 0;
  return {
    server,
    issuer: settings.issuer,
    logs,
    database,
    async close() {
      try {
        await server.close();
      } finally {
        output?.close();
        await database.drop();
      }
    },
    async addUser(username, password, options = {}) {
      registerSecret('password', password);
      const input = {
        username,
        email: options.email ?? null,
        displayName: options.displayName ?? null,
        groups: options.groups ?? [],
      };
      return (await createUser(admin, input, password)).user.id;
    },
    async addClient(options) {
      const { client, clientSecret } = await registerClient(admin, {
        name: options.name ?? `client-${++counter}`,
        public: options.public ?? false,
        trusted: options.trusted ?? false,
        redirectUris: options.redirectUris ?? [],
        postLogoutRedirectUris: options.postLogoutRedirectUris ?? [],
        grantTypes: options.grants,
        scopes: options.scopes ?? ['openid', 'profile', 'email', 'groups'],
        audiences: options.audiences ?? [],
        accessTokenTtl: options.accessTokenTtl ?? 600,
        refreshTokenTtl: options.refreshTokenTtl ?? 86_400,
      });
      registerSecret('client secret', clientSecret);
      return { clientId: client.clientId, clientSecret: clientSecret ?? '' };
    },
    async addApiKey(scopes) {
      const { key } = await createApiKey(admin, { name: `key-${++counter}`, scopes });
      registerSecret('API key', key);
      return key;
    },
  };
}

/** A clock that follows real time plus however far a test has moved it on. */
export function testClock(): Clock & { advance(ms: number): void } {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    advance(ms) {
      offset += ms;
    },
  };
}
