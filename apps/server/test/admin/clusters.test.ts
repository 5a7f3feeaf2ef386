import { createIdgateAdminClient, type IdgateAdminClient } from '@idgate/sdk';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { httpError } from '../helpers/http-error.js';

const BASE = '/admin/v1/clusters';

describe.each(testDatabaseUrls())('admin cluster API and cluster-bound TokenReview on $name', (kind) => {
  let t: TestApp;
  let adminKey: string;
  let admin: IdgateAdminClient;
  const raw = (path: string, init: RequestInit = {}, key = adminKey) =>
    t.fetch(`${t.baseUrl}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...init.headers } });
  const postJson = (body: string, type = 'application/json') =>
    raw(BASE, { method: 'POST', headers: { 'content-type': type }, body });
  const review = async (key: string, token: string, audiences?: string[]) => {
    const response = await raw(
      '/oauth/authenticate',
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          spec: { token, ...(audiences === undefined ? {} : { audiences }) },
        }),
      },
      key,
    );
    return { status: response.status, body: (await response.json()) as { status: Record<string, unknown> } };
  };

  beforeAll(async () => {
    t = await startTestApp(kind);
    adminKey = await t.addApiKey(['admin']);
    admin = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: adminKey, fetch: t.fetch });
  });
  afterAll(async () => t?.close());

  it('registers clusters through the SDK, answering each key once, and lists, reads and removes them', async () => {
    const a = await admin.createCluster({ name: 'Alpha' });
    expect(a.cluster).toMatchObject({ name: 'alpha', audience: 'kubernetes:alpha' });
    expect(a.apiKey).toMatch(/^idg_/);
    expect(a.kubectlClientCreated).toBe(true);
    const response = await postJson(JSON.stringify({ name: 'beta', audience: 'https://beta.k8s.example' }));
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`${t.baseUrl}${BASE}/beta`);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const b = (await response.json()) as {
      cluster: { kubectlClientId: string };
      kubectlClientCreated: boolean;
    };
    expect(b.kubectlClientCreated).toBe(false);
    expect(b.cluster.kubectlClientId).toBe(a.cluster.kubectlClientId);

    expect((await admin.listClusters()).items.map((c) => [c.name, c.audience])).toEqual([
      ['alpha', 'kubernetes:alpha'],
      ['beta', 'https://beta.k8s.example'],
    ]);
    expect(await admin.getCluster('ALPHA')).toEqual(a.cluster);
    // Listings never show a key again.
    expect(JSON.stringify(await admin.listClusters())).not.toContain(a.apiKey);

    await admin.deleteCluster('beta');
    const gone = await httpError(admin.getCluster('beta'));
    expect(gone.status).toBe(404);
    expect(gone.problem).toMatchObject({ code: 'cluster_not_found', detail: 'there is no cluster beta' });
    await admin.deleteCluster('alpha');
  });

  it('answers problems for bad input, taken names, a wrong content type and missing credentials', async () => {
    await admin.createCluster({ name: 'taken' });
    const bad = await postJson(JSON.stringify({ name: 'bad_name' }));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      code: 'invalid_cluster',
      detail: expect.stringMatching(/^name "bad_name": must be 1 to 63/),
    });
    const audience = await postJson(JSON.stringify({ name: 'x', audience: 'not a uri' }));
    expect(((await audience.json()) as { code: string }).code).toBe('invalid_cluster');
    const conflict = await httpError(admin.createCluster({ name: 'TAKEN' }));
    expect(conflict.status).toBe(409);
    expect(conflict.problem?.code).toBe('cluster_exists');
    expect((await postJson('name=x', 'application/x-www-form-urlencoded')).status).toBe(415);
    const anonymous = await t.fetch(`${t.baseUrl}${BASE}`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const reviewer = await t.addApiKey(['tokenreview']);
    expect((await raw(BASE, {}, reviewer)).status).toBe(403);
    await admin.deleteCluster('taken');
  });

  it('documents the cluster paths in the OpenAPI document', async () => {
    const document = (await (await t.fetch(`${t.baseUrl}/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<string, { tags: string[]; security: unknown; responses: Record<string, unknown> }>
      >;
    };
    expect(Object.keys(document.paths[BASE] ?? {})).toEqual(['get', 'post']);
    expect(Object.keys(document.paths[`${BASE}/{name}`] ?? {})).toEqual(['get', 'patch', 'delete']);
    expect(document.paths[`${BASE}/{name}`]?.patch).toMatchObject({
      security: [{ adminApiKey: ['clusters:write'] }],
    });
    expect(document.paths[BASE]?.post).toMatchObject({
      tags: ['clusters'],
      security: [{ adminApiKey: ['clusters:write'] }],
    });
    expect(Object.keys(document.paths[BASE]?.post?.responses ?? {})).toEqual([
      '201',
      '400',
      '401',
      '403',
      '409',
      '413',
      '415',
      '503',
    ]);
  });

  describe('TokenReview with a key bound to a cluster', () => {
    let keys: { a: string; b: string; unbound: string };
    let tokenFor: (resource: string) => Promise<string>;

    beforeAll(async () => {
      const a = await admin.createCluster({ name: 'a' });
      const b = await admin.createCluster({ name: 'b' });
      keys = { a: a.apiKey, b: b.apiKey, unbound: await t.addApiKey(['tokenreview']) };
      await t.addUser('carol', 'correct horse battery', {
        groups: ['platform'],
        email: 'carol@example.test',
      });
      const app = await t.addClient({
        grants: ['password'],
        trusted: true,
        scopes: ['openid', 'profile', 'email', 'groups'],
        audiences: ['kubernetes:a', 'kubernetes:b', 'https://web.example', 'https://a2.k8s.example'],
      });
      tokenFor = async (resource) => {
        const response = await t.fetch(`${t.baseUrl}/oauth/token`, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            authorization: `Basic ${btoa(`${app.clientId}:${app.clientSecret}`)}`,
          },
          body: new URLSearchParams({
            grant_type: 'password',
            username: 'carol',
            password: 'correct horse battery',
            scope: 'openid email',
            resource,
          }),
        });
        expect(response.status).toBe(200);
        return ((await response.json()) as { access_token: string }).access_token;
      };
    });

    it('a token for a cluster carries the claims Kubernetes maps; one for a web application does not', async () => {
      const claims = decodeJwt(await tokenFor('kubernetes:a'));
      expect(claims).toMatchObject({
        aud: 'kubernetes:a',
        preferred_username: 'carol',
        groups: ['platform'],
        email: 'carol@example.test',
        email_verified: false,
      });
      const web = decodeJwt(await tokenFor('https://web.example'));
      expect(web).not.toHaveProperty('preferred_username');
      expect(web).not.toHaveProperty('groups');
    });

    it('cluster A authenticates its token and answers its audience', async () => {
      const answer = await review(keys.a, await tokenFor('kubernetes:a'));
      expect(answer.status).toBe(200);
      expect(answer.body.status).toMatchObject({
        authenticated: true,
        audiences: ['kubernetes:a'],
        user: { username: 'carol', groups: ['platform'] },
      });
    });

    it('cluster B refuses a token for A and one for a web application, with HTTP 200', async () => {
      for (const resource of ['kubernetes:a', 'https://web.example']) {
        const answer = await review(keys.b, await tokenFor(resource));
        expect(answer.status).toBe(200);
        expect(answer.body.status).toEqual({ authenticated: false, error: 'token is not for this cluster' });
      }
    });

    it('an unbound key keeps today’s behaviour', async () => {
      const token = await tokenFor('kubernetes:a');
      expect((await review(keys.unbound, token)).body.status).toMatchObject({ authenticated: true });
      expect((await review(keys.unbound, token, ['kubernetes:b'])).body.status).toEqual({
        authenticated: false,
        error: 'token audience does not match',
      });
    });

    it('removing a cluster revokes its key at once (the directory forgets it)', async () => {
      const token = await tokenFor('kubernetes:b');
      expect((await review(keys.b, token)).body.status.authenticated).toBe(true);
      await admin.deleteCluster('b');
      expect((await review(keys.b, token)).status).toBe(401);
      // The kubectl client no longer gets b's audience.
      const kubectl = await t.services.storage.clients.findById(
        (await admin.getCluster('a')).kubectlClientId ?? '',
      );
      expect(kubectl?.audiences).toEqual(['kubernetes:a']);
    });

    it('a cluster renamed and given another audience keeps its key, which answers for the new audience only', async () => {
      const bound = async (name: string) =>
        (await t.services.storage.apiKeys.list()).filter((k) => k.cluster?.name === name);
      const before = await bound('a');
      expect(before).toHaveLength(1);
      // The directory holds the key as it was: the change must reach it.
      expect((await review(keys.a, await tokenFor('kubernetes:a'))).body.status.authenticated).toBe(true);

      const updated = await admin.updateCluster('A', { name: 'a2', audience: 'https://a2.k8s.example' });
      expect(updated).toMatchObject({ name: 'a2', audience: 'https://a2.k8s.example' });
      expect(await admin.getCluster('a2')).toEqual(updated);
      expect((await httpError(admin.getCluster('a'))).status).toBe(404);

      const fresh = await review(keys.a, await tokenFor('https://a2.k8s.example'));
      expect(fresh.status).toBe(200);
      expect(fresh.body.status).toMatchObject({
        authenticated: true,
        audiences: ['https://a2.k8s.example'],
        user: { username: 'carol' },
      });
      expect((await review(keys.a, await tokenFor('kubernetes:a'))).body.status).toEqual({
        authenticated: false,
        error: 'token is not for this cluster',
      });
      // The same key (id, prefix, hash), live, bound to the cluster under its new name and audience.
      const [key] = await bound('a2');
      expect(key).toEqual({ ...before[0], cluster: { name: 'a2', audience: 'https://a2.k8s.example' } });
      expect(await bound('a')).toEqual([]);
      const kubectl = await t.services.storage.clients.findById(updated.kubectlClientId ?? '');
      expect(kubectl?.audiences).toEqual(['https://a2.k8s.example']);

      const { items } = await admin.listEvents({ type: 'admin.changed' });
      expect(items.at(-1)?.details).toEqual({
        objectKind: 'cluster',
        objectId: 'a2',
        action: 'updated',
        operation: null,
        before: { name: 'a', audience: 'kubernetes:a' },
        after: { name: 'a2', audience: 'https://a2.k8s.example' },
      });
    });

    it('refuses a change to a name or audience another cluster has, a bad field, an empty change, an unknown cluster', async () => {
      await admin.createCluster({ name: 'other', audience: 'https://other.example' });
      const taken = await httpError(admin.updateCluster('a2', { name: 'other' }));
      expect([taken.status, taken.problem?.code]).toEqual([409, 'cluster_exists']);
      const audience = await httpError(admin.updateCluster('a2', { audience: 'https://other.example' }));
      expect([audience.status, audience.problem?.code]).toEqual([409, 'cluster_exists']);
      const patch = (body: string) =>
        raw(`${BASE}/a2`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body });
      for (const body of ['{}', '{"name":"bad_name"}', '{"audience":"not a uri"}', '{"createdAt":"x"}']) {
        const response = await patch(body);
        expect(response.status, body).toBe(400);
        expect(await response.json(), body).toMatchObject({ code: 'invalid_cluster' });
      }
      const missing = await httpError(admin.updateCluster('nope', { audience: 'https://x.example' }));
      expect([missing.status, missing.problem?.code]).toEqual([404, 'cluster_not_found']);
      expect((await admin.getCluster('a2')).audience).toBe('https://a2.k8s.example');
      await admin.deleteCluster('other');
    });
  });
});
