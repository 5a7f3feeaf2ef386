import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createIdgateAdminClient, createIdgateClient } from '@idgate/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, testDatabaseUrls } from '../helpers/databases.js';
import { freePort } from '../helpers/server.js';

const BIN = fileURLToPath(new URL('../../dist/bin.js', import.meta.url));
const SECRET = 'replica-test-secret-0123456789abcdefghij';
const postgres = testDatabaseUrls().find((kind) => kind.name === 'postgres');

/** Polls `check` until it is true, or fails after `limitMs`. */
async function within(limitMs: number, check: () => Promise<boolean>): Promise<void> {
  const start = performance.now();
  while (performance.now() - start < limitMs) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`not within ${limitMs} ms`);
}

describe.runIf(postgres !== undefined)('group changes across replicas on one PostgreSQL database', () => {
  let database: TestDatabase;
  const replicas: Array<{ url: string; process: ChildProcess }> = [];
  let creds: {
    apiKey: string;
    admin: { username: string; password: string };
    client: { clientId: string; clientSecret: string };
  };

  beforeAll(async () => {
    if (!existsSync(BIN)) throw new Error('dist/bin.js is missing: run `pnpm build` first');
    database = await (postgres as NonNullable<typeof postgres>).create();
    const ports = [await freePort(), await freePort()];
    const env = {
      PATH: process.env.PATH,
      IDGATE_DATABASE_URL: database.url,
      IDGATE_SECRET: SECRET,
      IDGATE_ISSUER: `http://127.0.0.1:${ports[0]}/oauth`,
      IDGATE_HOST: '127.0.0.1',
      IDGATE_LOG_LEVEL: 'warn',
    };
    creds = JSON.parse(
      (await promisify(execFile)(process.execPath, [BIN, 'init', '--json'], { env })).stdout,
    );
    for (const port of ports) {
      const child = spawn(process.execPath, [BIN, 'serve'], {
        env: { ...env, IDGATE_PORT: String(port) },
        stdio: 'ignore',
      });
      replicas.push({ url: `http://127.0.0.1:${port}`, process: child });
    }
    for (const replica of replicas) {
      await within(
        60_000,
        async () => (await fetch(`${replica.url}/readyz`).catch(() => undefined))?.status === 200,
      );
    }
  }, 120_000);

  afterAll(async () => {
    for (const replica of replicas) replica.process.kill('SIGTERM');
    await Promise.all(
      replicas.map(
        (r) =>
          new Promise((resolve) =>
            r.process.exitCode !== null ? resolve(null) : r.process.once('exit', resolve),
          ),
      ),
    );
    await database?.drop();
  });

  it('groups changed over REST on A show in B’s TokenReview within one second', async () => {
    const [onA, onB] = replicas;
    if (onA === undefined || onB === undefined) throw new Error('two replicas');
    // an administrator on replica A, a kube-apiserver and a person signing in on replica B
    const a = createIdgateAdminClient({ baseUrl: onA.url, apiKey: creds.apiKey });
    const b = createIdgateClient({ baseUrl: onB.url, apiKey: creds.apiKey });
    const { access_token } = await b.passwordGrant({
      clientId: creds.client.clientId,
      clientSecret: creds.client.clientSecret,
      username: creds.admin.username,
      password: creds.admin.password,
      scope: 'openid',
    });
    const groupsOnB = async () => (await b.reviewToken(access_token)).status.user?.groups ?? [];
    const before = await a.getUser(creds.admin.username);
    expect(await groupsOnB()).toEqual(before.groups);

    await a.updateUser(creds.admin.username, { groups: [...before.groups, 'sre'] }, { ifMatch: before.etag });
    await within(1000, async () => (await groupsOnB()).includes('sre'));

    await a.removeGroupMember('sre', creds.admin.username);
    await within(1000, async () => !(await groupsOnB()).includes('sre'));
  });
});
