import { createIdgateAdminClient, createIdgateClient } from '@idgate/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, testDatabaseUrls } from '../helpers/databases.js';
import {
  type InitCredentials,
  initDatabase,
  type ServeProcess,
  startServeProcesses,
  within,
} from '../helpers/serve-process.js';
import { freePort } from '../helpers/server.js';

const SECRET = 'replica-test-secret-0123456789abcdefghij';
const postgres = testDatabaseUrls().find((kind) => kind.name === 'postgres');

describe.runIf(postgres !== undefined)('group changes across replicas on one PostgreSQL database', () => {
  let database: TestDatabase;
  let replicas: ServeProcess[] = [];
  let creds: InitCredentials;

  beforeAll(async () => {
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
    creds = await initDatabase(env);
    replicas = await startServeProcesses(env, ports, { readyWithinMs: 60_000 });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
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
