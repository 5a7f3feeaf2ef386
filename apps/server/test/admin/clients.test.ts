import { createIdgateAdminClient, type IdgateAdminClient } from '@idgate/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, testClock } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { httpError } from '../helpers/http-error.js';

const BASE = '/admin/v1/clients';
const WEB = {
  name: 'web',
  grantTypes: ['authorization_code' as const, 'refresh_token' as const],
  redirectUris: ['https://app.example.com/callback'],
};

describe.each(testDatabaseUrls())('admin client API on $name', (kind) => {
  let t: TestApp;
  let adminKey: string;
  let admin: IdgateAdminClient;
  const clock = testClock();
  const raw = (path: string, init: RequestInit = {}) =>
    t.fetch(`${t.baseUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${adminKey}`, ...init.headers },
    });
  const clientCredentials = (clientId: string, secret: string) =>
    t.fetch(`${t.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${btoa(`${clientId}:${secret}`)}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials' }),
    });

  beforeAll(async () => {
    t = await startTestApp(kind, {}, { clock });
    adminKey = await t.addApiKey(['admin']);
    admin = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: adminKey, fetch: t.fetch });
  });
  afterAll(async () => t?.close());

  it('registers a client through the SDK, answering its secret once, and reads it with its ETag', async () => {
    const created = await admin.createClient(WEB);
    expect(created.clientId).toMatch(/^cl_/);
    expect(created.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Defaults follow grants: refresh_token brings offline_access.
    expect(created.scopes).toContain('offline_access');
    const read = await admin.getClient(created.clientId);
    const { clientSecret: _secret, ...view } = created;
    expect(read).toEqual(view);
    expect(JSON.stringify(read)).not.toContain(created.clientSecret);
    const response = await raw(`${BASE}/${created.clientId}`);
    expect(response.headers.get('etag')).toBe(read.etag);
    expect(response.headers.get('cache-control')).toBe('no-store');

    const posted = await raw(BASE, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ci' }),
    });
    expect(posted.status).toBe(201);
    const body = (await posted.json()) as Record<string, unknown>;
    expect(posted.headers.get('location')).toBe(`${t.baseUrl}${BASE}/${body.clientId}`);
    expect(Object.keys(body)).toContain('clientSecret');
    expect(Object.keys(body)).not.toContain('client_id');
    expect(Object.keys(body)).not.toContain('client_secret');
    await admin.deleteClient(created.clientId);
    await admin.deleteClient(body.clientId as string);
  });

  it('lists clients a page at a time, in SQL order, with an opaque cursor', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await admin.createClient({ name: `page-${i}` })).clientId);
      clock.advance(1);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await admin.listClients({ limit: 2, ...(cursor === undefined ? {} : { cursor }) });
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((c) => c.clientId));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(seen.filter((id) => ids.includes(id))).toEqual(ids);
    const bad = await raw(`${BASE}?limit=0`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { detail: string }).detail).toMatch(/^limit/);
    const badCursor = await raw(`${BASE}?cursor=%00abc`);
    expect(badCursor.status).toBe(400);
    for (const id of ids) await admin.deleteClient(id);
  });

  it('changes a client with If-Match, refusing a stale ETag (412) and a bad field (400 naming it)', async () => {
    const created = await admin.createClient(WEB);
    const changed = await admin.updateClient(
      created.clientId,
      { name: 'web app', redirectUris: ['https://app.example.com/cb2'], trusted: true, accessTokenTtl: 300 },
      { ifMatch: created.etag },
    );
    expect(changed).toMatchObject({
      name: 'web app',
      redirectUris: ['https://app.example.com/cb2'],
      trusted: true,
      accessTokenTtl: 300,
    });
    const stale = await httpError(
      admin.updateClient(created.clientId, { name: 'x' }, { ifMatch: created.etag }),
    );
    expect(stale.status).toBe(412);
    expect(stale.problem?.code).toBe('precondition_failed');

    const invalid = await httpError(
      admin.updateClient(created.clientId, { redirectUris: ['http://app.example.com/cb#frag'] }),
    );
    expect(invalid.status).toBe(400);
    expect(invalid.problem).toMatchObject({
      code: 'invalid_client',
      detail: expect.stringMatching(
        /^redirectUris "http:\/\/app\.example\.com\/cb#frag": must not have a fragment/,
      ),
    });
    const ttl = await httpError(admin.updateClient(created.clientId, { accessTokenTtl: 86_401 }));
    expect(ttl.problem?.detail).toMatch(/^accessTokenTtl 86401: must be at most 86400 seconds/);
    const inconsistent = await httpError(
      admin.updateClient(created.clientId, { grantTypes: ['refresh_token'] }),
    );
    expect(inconsistent.problem?.detail).toMatch(/^redirectUris: only used by the authorization_code grant/);
    const nul = await raw(`${BASE}/${created.clientId}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'a\u0000b' }),
    });
    expect(nul.status).toBe(400);
    expect(((await nul.json()) as { detail: string }).detail).toBe(
      'name: must not contain control characters',
    );
    const form = await raw(`${BASE}/${created.clientId}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=x',
    });
    expect(form.status).toBe(415);
    // The change is an object, as the route declares it: JSON null is not an empty change.
    const none = await raw(`${BASE}/${created.clientId}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: 'null',
    });
    expect(none.status).toBe(400);
    expect(await none.json()).toMatchObject({
      code: 'invalid_client',
      detail: 'body: Invalid input: expected object, received null',
    });
    await admin.deleteClient(created.clientId);
  });

  it('refuses inconsistent registrations, naming the reason', async () => {
    for (const [input, detail] of [
      [
        { name: 'x', grantTypes: ['authorization_code'] },
        /^grantTypes authorization_code needs at least one redirectUris/,
      ],
      [{ name: 'x', grantTypes: ['refresh_token'] }, /^grantTypes refresh_token: needs a grant that issues/],
      [
        { name: 'x', scopes: ['openid', 'offline_access'] },
        /^scopes offline_access: needs the refresh_token grant/,
      ],
      [
        { name: 'x', redirectUris: ['ftp://x/cb'], grantTypes: ['authorization_code'] },
        /^redirectUris "ftp:\/\/x\/cb": must use https/,
      ],
    ] as const) {
      const error = await httpError(admin.createClient(input as never));
      expect(error.status).toBe(400);
      expect(error.problem?.detail).toMatch(detail);
    }
  });

  it('rotates a secret: the previous one works within the grace period and not after it', async () => {
    const { clientId, clientSecret } = await admin.createClient({ name: 'rotating' });
    const old = clientSecret as string;
    expect((await clientCredentials(clientId, old)).status).toBe(200);
    const rotated = await admin.rotateClientSecret(clientId, { gracePeriod: 3600 });
    expect(rotated.clientSecret).not.toBe(old);
    expect(Date.parse(rotated.previousSecretExpiresAt as string) - clock.now()).toBeLessThanOrEqual(
      3_600_000,
    );
    expect((await clientCredentials(clientId, rotated.clientSecret)).status).toBe(200);
    expect((await clientCredentials(clientId, old)).status).toBe(200);
    clock.advance(3_600_001);
    expect((await clientCredentials(clientId, old)).status).toBe(401);
    expect((await clientCredentials(clientId, rotated.clientSecret)).status).toBe(200);

    // Without a grace period the replaced secret stops at once.
    const again = await admin.rotateClientSecret(clientId);
    expect(again.previousSecretExpiresAt).toBeNull();
    expect((await clientCredentials(clientId, rotated.clientSecret)).status).toBe(401);
    expect((await clientCredentials(clientId, again.clientSecret)).status).toBe(200);
    const tooLong = await httpError(admin.rotateClientSecret(clientId, { gracePeriod: 2_592_001 }));
    expect(tooLong.problem?.detail).toMatch(/^gracePeriod 2592001: /);
    await admin.deleteClient(clientId);
  });

  it('answers 404 for an unknown client on every route, and deletes once', async () => {
    for (const call of [
      () => admin.getClient('cl_unknown'),
      () => admin.updateClient('cl_unknown', { name: 'x' }),
      () => admin.rotateClientSecret('cl_unknown'),
      () => admin.deleteClient('cl_unknown'),
    ]) {
      const error = await httpError(call());
      expect(error.status).toBe(404);
      expect(error.problem).toMatchObject({
        code: 'client_not_found',
        detail: 'there is no client cl_unknown',
      });
    }
  });

  it('keeps the kubectl client’s audiences with the clusters', async () => {
    const { cluster } = await admin.createCluster({ name: 'prod' });
    const id = cluster.kubectlClientId as string;
    const refused = await httpError(admin.updateClient(id, { audiences: ['https://elsewhere.example'] }));
    expect(refused.status).toBe(409);
    expect(refused.problem?.code).toBe('client_read_only');
    expect(refused.problem?.detail).toContain('idgate clusters');
    const undeletable = await httpError(admin.deleteClient(id));
    expect(undeletable.status).toBe(409);
    expect(undeletable.problem?.detail).toContain('idgate clusters remove');
    await admin.deleteCluster('prod');
  });

  it('refuses without an admin key', async () => {
    expect((await t.fetch(`${t.baseUrl}${BASE}`)).status).toBe(401);
    const reviewer = await t.addApiKey(['tokenreview']);
    const forbidden = await t.fetch(`${t.baseUrl}${BASE}`, {
      headers: { authorization: `Bearer ${reviewer}` },
    });
    expect(forbidden.status).toBe(403);
  });
});
