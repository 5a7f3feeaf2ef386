import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { type Clock, generateApiKey, generateSecret, hashSecret } from '@idgate/core';
import type { ApiKeyScope, GrantType } from '@idgate/schema';
import { type IdgateConfigInput, loadConfig } from '../../src/config.js';
import { type RunningServer, startServer } from '../../src/serve.js';
import type { TestDatabase, TestDatabaseKind } from './databases.js';

export const TEST_SECRET = 'integration-test-secret-0123456789abcdef';

/** A free TCP port on 127.0.0.1 (the issuer must name the port before the server listens). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/** A real idgate listening on loopback, its database, and everything its logs said. */
export interface TestServer {
  server: RunningServer;
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
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
  }): Promise<{ clientId: string; clientSecret: string }>;
  addApiKey(scopes: ApiKeyScope[]): Promise<string>;
}

export async function startTestServer(
  kind: TestDatabaseKind,
  overrides: IdgateConfigInput = {},
  options: { clock?: Clock } = {},
): Promise<TestServer> {
  const database = await kind.create();
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}/oauth`;
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      logs.push(
        ...String(chunk)
          .split('\n')
          .filter((line) => line !== ''),
      );
      done();
    },
  });
  const config = loadConfig({
    env: {},
    overrides: {
      host: '127.0.0.1',
      port,
      issuer,
      database: { url: database.url },
      secret: TEST_SECRET,
      log: { level: 'info' },
      ...overrides,
    },
  });
  const server = await startServer(config, { logStream, ...options });
  const { storage, hasher } = server.services;
  let counter = 0;
  return {
    server,
    baseUrl: `http://127.0.0.1:${port}`,
    issuer,
    logs,
    database,
    async close() {
      await server.close();
      await database.drop();
    },
    async addUser(username, password, options = {}) {
      const id = crypto.randomUUID();
      await storage.users.create({
        id,
        username,
        email: options.email ?? null,
        displayName: options.displayName ?? null,
        groups: options.groups ?? [],
        passwordHash: await hasher.hash(password),
        createdAt: new Date(),
      });
      return id;
    },
    async addClient(options) {
      const clientId = `client-${++counter}`;
      const clientSecret = generateSecret();
      await storage.clients.create({
        clientId,
        name: options.name ?? clientId,
        secretHash: options.public ? null : await hashSecret(clientSecret),
        public: options.public ?? false,
        trusted: options.trusted ?? false,
        redirectUris: options.redirectUris ?? [],
        postLogoutRedirectUris: options.postLogoutRedirectUris ?? [],
        grantTypes: options.grants,
        scopes: options.scopes ?? ['openid', 'profile', 'email', 'groups'],
        audiences: options.audiences ?? [],
        accessTokenTtl: options.accessTokenTtl ?? 600,
        refreshTokenTtl: options.refreshTokenTtl ?? 86_400,
        createdAt: new Date(),
      });
      return { clientId, clientSecret };
    },
    async addApiKey(scopes) {
      const generated = await generateApiKey();
      await storage.apiKeys.create({
        id: crypto.randomUUID(),
        name: `key-${++counter}`,
        prefix: generated.prefix,
        hash: generated.hash,
        scopes,
        createdAt: new Date(),
        lastUsedAt: null,
        revokedAt: null,
      });
      return generated.key;
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
