import { createIdgateAdminClient, createIdgateClient } from '@idgate/sdk';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
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

describe.runIf(postgres !== undefined)('changes across replicas on one PostgreSQL database', () => {
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

  it('clusters and trusts changed on A apply to B’s token exchange and TokenReview, heard through the change feed', async () => {
    const [onA, onB] = replicas;
    if (onA === undefined || onB === undefined) throw new Error('two replicas');
    const a = createIdgateAdminClient({ baseUrl: onA.url, apiKey: creds.apiKey });
    // A CI issuer whose key the trust holds inline.
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kty: 'EC', kid: 'ci', alg: 'ES256' };
    let counter = 0;
    const job = (repository: string) =>
      new SignJWT({ repository, jti: `job-${++counter}` })
        .setProtectedHeader({ alg: 'ES256', kid: 'ci' })
        .setIssuer('https://ci.example')
        .setAudience('idgate')
        .setSubject(`repo:${repository}`)
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(privateKey);
    const { apiKey: prodKey } = await a.createCluster({ name: 'prod' });
    await a.createTrust({
      name: 'ci',
      issuer: 'https://ci.example',
      audience: 'idgate',
      jwks: { keys: [jwk] },
      condition: 'claims.repository == "acme/infra"',
      username: 'ci:{repository}',
      groups: [],
      clusters: ['prod'],
      maxTtl: 600,
    });
    const b = createIdgateClient({ baseUrl: onB.url });
    const reviewer = createIdgateClient({ baseUrl: onB.url, apiKey: prodKey });
    const exchangeOnB = async (repository: string) =>
      b.tokenExchange({ subjectToken: await job(repository), audience: 'prod' }).then(
        (tokens) => tokens.access_token,
        (error: Error) => error.message,
      );
    const token = await exchangeOnB('acme/infra');
    expect((await reviewer.reviewToken(token)).status.user?.username).toBe('ci:acme/infra');

    // B has read (and holds) the trust and the cluster: changes made on A reach it.
    await a.updateTrust('ci', { condition: 'claims.repository == "acme/web"' });
    await within(5000, async () => (await exchangeOnB('acme/infra')).includes('condition'));
    expect(await exchangeOnB('acme/web')).toMatch(/^eyJ/);

    await a.updateCluster('prod', { requireMfa: true });
    await within(5000, async () => (await reviewer.reviewToken(token)).status.authenticated === false);
    expect((await reviewer.reviewToken(token)).status.error).toMatch(/second factor/);
    expect(await exchangeOnB('acme/web')).toMatch(/requires a sign-in with a second factor/);
  });
});
