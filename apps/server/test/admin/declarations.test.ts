import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey } from '@idgate/core';
import { createIdgateAdminClient } from '@idgate/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/serve.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { httpError } from '../helpers/http-error.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const SECRET_VARIABLE = 'IDGATE_DECLARED_TEST_CI_SECRET';
const CI_SECRET = 'ci-client-secret-0123456789abcdefgh';

/** A client_credentials token for the cluster audience, from the token endpoint over loopback. */
async function clientToken(baseUrl: string, clientId: string, secret: string, resource: string) {
  const response = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function review(baseUrl: string, key: string, token: string) {
  const response = await fetch(`${baseUrl}/oauth/authenticate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }),
  });
  return ((await response.json()) as { status: { authenticated?: boolean } }).status;
}

describe.each(testDatabaseUrls())('declarations over the admin API and at start on $name', (kind) => {
  let t: TestServer;
  beforeAll(async () => {
    process.env[SECRET_VARIABLE] = CI_SECRET;
    t = await startTestServer(kind);
  });
  afterAll(async () => {
    delete process.env[SECRET_VARIABLE];
    await t?.close();
  });

  const declarations = {
    clients: [
      {
        clientId: 'ci',
        name: 'CI',
        grantTypes: ['client_credentials'],
        audiences: ['kubernetes:ops'],
        secret: { env: SECRET_VARIABLE },
      },
    ],
    clusters: [{ name: 'ops' }],
  };

  it('plans and applies through the SDK; the declared client signs in with its referenced secret', async () => {
    const admin = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: await t.addApiKey(['admin']) });
    const plan = await admin.applyDeclarations(declarations, { dryRun: true });
    expect(plan.changes.map((c) => `${c.action} ${c.kind} ${c.name}`)).toEqual([
      'create client ci',
      'create cluster ops',
    ]);
    expect(JSON.stringify(plan)).not.toContain(CI_SECRET);
    expect((await clientToken(t.baseUrl, 'ci', CI_SECRET, 'kubernetes:ops')).status).toBe(401);

    const applied = await admin.applyDeclarations(declarations);
    expect(applied.summary).toEqual({ create: 2, update: 0, delete: 0, unchanged: 0, drift: 0 });
    const token = await clientToken(t.baseUrl, 'ci', CI_SECRET, 'kubernetes:ops');
    expect(token.status).toBe(200);
    expect(token.body.access_token).toEqual(expect.any(String));
    expect((await admin.applyDeclarations(declarations)).summary.unchanged).toBe(2);

    // Pruned, the client is gone and its secret no longer works.
    const pruned = await admin.applyDeclarations({ clusters: [{ name: 'ops' }] }, { prune: true });
    expect(pruned.changes.map((c) => `${c.action} ${c.kind} ${c.name}`)).toEqual([
      'unchanged cluster ops',
      'delete client ci',
    ]);
    expect((await clientToken(t.baseUrl, 'ci', CI_SECRET, 'kubernetes:ops')).status).toBe(401);
  });

  it('needs the write scope of each kind (read for a dry run), and reads no file and no other variable', async () => {
    const planner = createIdgateAdminClient({
      baseUrl: t.baseUrl,
      apiKey: await t.addApiKey(['declarations:apply', 'clusters:read']),
    });
    const dry = await planner.applyDeclarations({ clusters: [{ name: 'dev' }] }, { dryRun: true });
    expect(dry.changes).toHaveLength(1);
    const refused = await httpError(planner.applyDeclarations({ clusters: [{ name: 'dev' }] }));
    expect(refused.status).toBe(403);
    expect(refused.problem).toMatchObject({ code: 'api_key_scope', scope: 'clusters:write' });

    const operator = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: await t.addApiKey(['admin']) });
    const key = (await generateApiKey()).key;
    process.env.IDGATE_SECRET_ELSEWHERE = key;
    try {
      const other = await httpError(
        operator.applyDeclarations({
          apiKeys: [{ name: 'x', scopes: ['tokenreview'], key: { env: 'IDGATE_SECRET_ELSEWHERE' } }],
        }),
      );
      expect(other.status).toBe(400);
      expect(other.problem).toMatchObject({
        code: 'invalid_declarations',
        detail: expect.stringContaining('only variables named IDGATE_DECLARED_* are'),
      });
    } finally {
      delete process.env.IDGATE_SECRET_ELSEWHERE;
    }
    const file = await httpError(
      operator.applyDeclarations({
        apiKeys: [{ name: 'x', scopes: ['tokenreview'], key: { file: '/etc/hostname' } }],
      }),
    );
    expect(file.problem).toMatchObject({
      code: 'invalid_declarations',
      detail: expect.stringContaining('files are not read'),
    });

    // A key never declares a key stronger than itself.
    const keyMaker = createIdgateAdminClient({
      baseUrl: t.baseUrl,
      apiKey: await t.addApiKey(['declarations:apply', 'api-keys:write']),
    });
    process.env.IDGATE_DECLARED_TEST_KEY = key;
    try {
      const stronger = await httpError(
        keyMaker.applyDeclarations({
          apiKeys: [{ name: 'x', scopes: ['admin'], key: { env: 'IDGATE_DECLARED_TEST_KEY' } }],
        }),
      );
      expect(stronger.problem).toMatchObject({ code: 'api_key_scope', scope: 'admin' });
    } finally {
      delete process.env.IDGATE_DECLARED_TEST_KEY;
    }
  });
});

describe.each(testDatabaseUrls())('the declarations file read at start on $name', (kind) => {
  let dir: string;
  let t: TestServer | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'idgate-declared-'));
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('applies it before listening: the declared webhook key reviews the declared client’s token', async () => {
    const key = (await generateApiKey()).key;
    await writeFile(join(dir, 'key'), `${key}\n`);
    await writeFile(join(dir, 'secret'), CI_SECRET);
    await writeFile(
      join(dir, 'idgate.yaml'),
      `clients:
  - clientId: robot
    name: Robot
    grantTypes: [client_credentials]
    audiences: ["kubernetes:edge"]
    secret: { file: ${join(dir, 'secret')} }
clusters:
  - name: edge
apiKeys:
  - name: edge-webhook
    scopes: [tokenreview]
    cluster: edge
    key: { file: ${join(dir, 'key')} }
`,
    );
    t = await startTestServer(kind, { declarations: { path: join(dir, 'idgate.yaml') } });
    expect(t.logs.join('\n')).toContain(
      `declarations ${join(dir, 'idgate.yaml')}: 3 created, 0 updated, 0 deleted, 0 unchanged`,
    );
    const token = await clientToken(t.baseUrl, 'robot', CI_SECRET, 'kubernetes:edge');
    expect(token.status).toBe(200);
    expect(await review(t.baseUrl, key, token.body.access_token as string)).toMatchObject({
      authenticated: true,
    });
  });
});

describe('the declarations file read at start', () => {
  it('refuses to start on a bad file, naming it and the field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'idgate-declared-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'bad.yaml'), 'clusters:\n  - name: Not_A_Name\n');
    const config = loadConfig({
      env: {
        IDGATE_DATABASE_URL: 'sqlite::memory:',
        IDGATE_SECRET: 'a-secret-of-enough-length-0123456789',
        IDGATE_DECLARATIONS: join(dir, 'bad.yaml'),
        IDGATE_PORT: '0',
        IDGATE_HOST: '127.0.0.1',
      },
    });
    await expect(startServer(config)).rejects.toThrow(
      new RegExp(
        `^declarations ${join(dir, 'bad.yaml')}: ${join(dir, 'bad.yaml')}: clusters\\[0\\]\\.name "Not_A_Name"`,
      ),
    );
  });
});
