import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authenticateApiKey, verifySecret } from '@idgate/core';
import { InitResult } from '@idgate/schema';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATION_NAMES } from '../../src/storage/migrations/index.js';
import { type TestDatabase, testDatabaseUrls } from '../helpers/databases.js';
import { assertBuilt, envFor, migrated, openTestServices, runInProcess } from './support.js';

beforeAll(assertBuilt);

describe.each(testDatabaseUrls())('idgate init on $name', ({ create }) => {
  let database: TestDatabase;
  beforeEach(async () => {
    database = await create();
  });
  afterEach(async () => {
    await database.drop();
  });

  it('creates an admin, an API key and a trusted CLI client, and prints exactly the InitResult as --json', async () => {
    const env = envFor(database.url, {
      IDGATE_ISSUER: 'https://id.example.com/oauth',
      IDGATE_ACCESS_TOKEN_TTL: '1200',
    });
    const result = await runInProcess(['init', '--json'], { env });
    expect(result.code).toBe(0);
    // A configured secret: no warning, only the note about the migrations this first run applied.
    expect(result.stderr).toBe(`idgate: applied migrations: ${MIGRATION_NAMES.join(', ')}\n`);
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(Object.keys(printed).sort()).toEqual(['admin', 'apiKey', 'client', 'issuer']);
    const init = InitResult.parse(printed);
    expect(init.issuer).toBe('https://id.example.com/oauth');
    expect(init.admin.username).toBe('admin');
    expect(init.admin.password.length).toBeGreaterThanOrEqual(20);
    expect(init.apiKey).toMatch(/^idg_[a-z2-7]{8}_[A-Za-z0-9_-]{43}$/);
    expect(init.client.clientId).toMatch(/^cl_[a-z2-7]{16}$/);
    expect(init.client.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const services = await openTestServices(database.url);
    try {
      const { storage, hasher } = services;
      const admin = await storage.users.findByUsername('admin');
      expect(admin).toMatchObject({ username: 'admin', groups: ['idgate:admins'], disabled: false });
      expect(admin?.passwordHash).toMatch(/^\$argon2id\$/);
      expect(await hasher.verify(admin?.passwordHash ?? '', init.admin.password)).toBe(true);
      expect(await hasher.verify(admin?.passwordHash ?? '', `${init.admin.password}x`)).toBe(false);

      const find = (prefix: string) => storage.apiKeys.findByPrefix(prefix);
      const key = await authenticateApiKey(init.apiKey, 'admin', find);
      expect(key).toMatchObject({ name: 'init', scopes: ['tokenreview', 'admin'], revokedAt: null });
      await expect(authenticateApiKey(init.apiKey, 'tokenreview', find)).resolves.toMatchObject({
        id: key.id,
      });

      const client = await storage.clients.findById(init.client.clientId);
      expect(client).toMatchObject({
        name: 'idgate-cli',
        public: false,
        trusted: true,
        redirectUris: [],
        postLogoutRedirectUris: [],
        grantTypes: ['password', 'client_credentials', 'authorization_code', 'refresh_token'],
        scopes: ['openid', 'profile', 'email', 'groups', 'offline_access'],
        audiences: [],
        accessTokenTtl: 1200,
        refreshTokenTtl: 2_592_000,
      });
      expect(client?.secretHash).not.toBe(init.client.clientSecret);
      expect(await verifySecret(init.client.clientSecret, client?.secretHash ?? '')).toBe(true);
      expect([
        await storage.users.count(),
        await storage.clients.count(),
        await storage.apiKeys.count(),
      ]).toEqual([1, 1, 1]);
    } finally {
      await services.close();
    }
  });

  it('refuses a second init with one line, changing nothing', async () => {
    const env = envFor(database.url);
    const first = await runInProcess(['init', '--json', '--admin-username', 'root'], { env });
    expect(first.code).toBe(0);
    const before = await snapshot(database.url);

    const second = await runInProcess(['init', '--json'], { env });
    expect(second.code).toBe(1);
    expect(second.stdout).toBe('');
    expect(second.stderr).toBe('idgate: the database is already initialized\n');
    expect(await snapshot(database.url)).toEqual(before);
    expect(before.counts).toEqual([1, 1, 1]);
    expect(before.users).toEqual(['root']);
  });

  it.each([
    { holds: 'a user', args: ['users', 'add', 'alice'], counts: [1, 0, 0] },
    { holds: 'a client', args: ['clients', 'add', '--name', 'c'], counts: [0, 1, 0] },
    { holds: 'an API key', args: ['api-keys', 'add', '--name', 'k', '--scope', 'admin'], counts: [0, 0, 1] },
  ])('refuses a database that already holds $holds', async ({ args, counts }) => {
    const env = envFor(database.url);
    await migrated(database.url);
    expect((await runInProcess(args, { env })).code).toBe(0);
    const result = await runInProcess(['init'], { env });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('idgate: the database is already initialized\n');
    expect((await snapshot(database.url)).counts).toEqual(counts);
  });

  it('prints human output that says the secrets are shown once', async () => {
    const result = await runInProcess(['init', '--admin-username', 'Boss'], { env: envFor(database.url) });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('shown only once');
    expect(result.stdout).toMatch(/^Admin user: +Boss /m);
    expect(result.stdout).toMatch(/^API key: +idg_[a-z2-7]{8}_\S{43} /m);
    expect(result.stdout).toMatch(/^Client secret: +\S{43}$/m);
  });

  it("--demo adds a demo user, a cluster and the example application's client, and writes its settings", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'idgate-init-demo-'));
    try {
      const appEnv = join(dir, 'app.env');
      const args = ['init', '--demo', '--app-url', 'http://localhost:3100', '--app-env', appEnv, '--json'];
      const result = await runInProcess(args, { env: envFor(database.url) });
      expect(result.code).toBe(0);
      const { demo } = InitResult.parse(JSON.parse(result.stdout));
      expect(demo).toMatchObject({
        appUrl: 'http://localhost:3100',
        user: { username: 'demo' },
        client: { redirectUri: 'http://localhost:3100/callback' },
        cluster: { name: 'demo', audience: 'kubernetes:demo' },
      });
      expect(statSync(appEnv).mode & 0o777).toBe(0o600);
      const settings = readFileSync(appEnv, 'utf8');
      expect(settings).toContain(`DEMO_CLIENT_SECRET=${demo?.client.clientSecret}\n`);
      expect(settings).toContain(`DEMO_TOKENREVIEW_KEY=${demo?.cluster.apiKey}\n`);
      expect(settings).toContain('DEMO_APP_URL=http://localhost:3100\n');

      const services = await openTestServices(database.url);
      try {
        const { storage, hasher } = services;
        const user = await storage.users.findByUsername('demo');
        expect(user).toMatchObject({ groups: ['developers'], disabled: false });
        expect(await hasher.verify(user?.passwordHash ?? '', demo?.user.password ?? '')).toBe(true);
        expect(await storage.clients.findById(demo?.client.clientId ?? '')).toMatchObject({
          name: 'Example app',
          public: false,
          trusted: false,
          redirectUris: ['http://localhost:3100/callback'],
          audiences: ['kubernetes:demo'],
        });
        expect((await storage.clusters.list()).map((cluster) => cluster.name)).toEqual(['demo']);
      } finally {
        await services.close();
      }
      // The settings file is never overwritten: a second run stops before the database.
      const again = await runInProcess(args, { env: envFor(database.url) });
      expect(again).toMatchObject({ code: 2, stdout: '' });
      expect(again.stderr).toBe(`idgate: ${appEnv} exists already: choose another --app-env or remove it\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--demo says how to start the example application and whom to sign in as', async () => {
    const result = await runInProcess(['init', '--demo'], { env: envFor(database.url) });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Demo user: +demo, password \S{20,}$/m);
    expect(result.stdout).toMatch(
      /IDGATE_ISSUER=\S+ DEMO_APP_URL=http:\/\/localhost:3000 .* node examples\/web\/server\.mjs$/m,
    );
    expect(result.stdout).toContain('then open http://localhost:3000 and sign in as demo.');
  });

  it.each([
    { args: ['--app-env', 'x.env'], message: '--app-env needs --demo' },
    {
      args: ['--demo', '--app-url', 'not a url'],
      message: '--app-url: not an absolute URL: not a url',
    },
  ])('refuses $args before touching the database', async ({ args, message }) => {
    const result = await runInProcess(['init', ...args], { env: envFor(database.url) });
    expect(result).toMatchObject({ code: 2, stdout: '', stderr: `idgate: ${message}\n` });
    expect((await snapshot(database.url)).counts).toEqual([0, 0, 0]);
  });

  it('refuses an invalid --admin-username before touching the database', async () => {
    const result = await runInProcess(['init', '--admin-username', 'no spaces'], {
      env: envFor(database.url),
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^idgate: --admin-username "no spaces": may hold only .*\n$/);
  });
});

async function snapshot(url: string) {
  const services = await openTestServices(url);
  try {
    const { storage } = services;
    return {
      counts: [await storage.users.count(), await storage.clients.count(), await storage.apiKeys.count()],
      users: (await storage.users.list()).map((u) => u.username),
      clients: await storage.clients.list(),
      apiKeys: await storage.apiKeys.list(),
    };
  } finally {
    await services.close();
  }
}
