import { createIdgateAdminClient, type IdgateAdminClient } from '@idgate/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, testClock } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { httpError } from '../helpers/http-error.js';

const BASE = '/admin/v1/api-keys';

describe.each(testDatabaseUrls())('admin API key API on $name', (kind) => {
  let t: TestApp;
  let admin: IdgateAdminClient;
  let adminKey: string;
  const clock = testClock();

  beforeAll(async () => {
    t = await startTestApp(kind, {}, { clock });
    adminKey = await t.addApiKey(['admin']);
    admin = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: adminKey, fetch: t.fetch });
  });
  afterAll(async () => t?.close());

  it('creates a key answered once, lists it by prefix with its expiry, and revokes it', async () => {
    const created = await admin.createApiKey({ name: 'ci', scopes: ['admin'], expiresIn: 3600 });
    expect(created.key.startsWith(`${created.prefix}_`)).toBe(true);
    expect(Date.parse(created.expiresAt as string) - clock.now()).toBeLessThanOrEqual(3_600_000);
    const listed = (await admin.listApiKeys()).items.find((k) => k.id === created.id);
    const { key: _key, ...view } = created;
    expect(listed).toEqual(view);
    expect(JSON.stringify(await admin.listApiKeys())).not.toContain(created.key);

    const ci = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: created.key, fetch: t.fetch });
    expect((await ci.listApiKeys()).items.length).toBeGreaterThan(0);
    // The use is recorded after the answer, on a connection of its own: read until it is there.
    const lastUsedAt = async () =>
      (await admin.listApiKeys()).items.find((k) => k.id === created.id)?.lastUsedAt;
    await expect.poll(lastUsedAt, { timeout: 10_000 }).not.toBeNull();

    await admin.revokeApiKey(created.id);
    expect((await httpError(ci.listApiKeys())).status).toBe(401);
    const again = await httpError(admin.revokeApiKey(created.id));
    expect(again.status).toBe(404);
    expect(again.problem?.code).toBe('api_key_not_found');
  });

  it('refuses an expired key with 401 api_key_invalid, saying no more than for an unknown one', async () => {
    const { key } = await admin.createApiKey({ name: 'short', scopes: ['admin'], expiresIn: 60 });
    const short = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: key, fetch: t.fetch });
    await short.listSigningKeys();
    clock.advance(60_000);
    const expired = await httpError(short.listSigningKeys());
    expect(expired.status).toBe(401);
    expect(expired.problem).toMatchObject({ code: 'api_key_invalid', detail: 'the API key is not valid' });
    expect(expired.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('pages API keys and refuses bad input, naming the field', async () => {
    for (let i = 0; i < 3; i++) await admin.createApiKey({ name: `page-${i}`, scopes: ['audit:read'] });
    const first = await admin.listApiKeys({ limit: 2 });
    expect(first.items).toHaveLength(2);
    const rest = await admin.listApiKeys({ limit: 500, cursor: first.nextCursor as string });
    const ids = [...first.items, ...rest.items].map((k) => k.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(rest.nextCursor).toBeNull();

    const bad = await httpError(admin.createApiKey({ name: 'x', scopes: ['admin'], expiresIn: 0 }));
    expect(bad.status).toBe(400);
    expect(bad.problem).toMatchObject({
      code: 'invalid_api_key',
      detail: expect.stringMatching(/^expiresIn 0: /),
    });
    const scopes = await httpError(admin.createApiKey({ name: 'x', scopes: [] }));
    expect(scopes.problem?.detail).toMatch(/^scopes/);
    const form = await t.fetch(`${t.baseUrl}${BASE}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'text/plain' },
      body: 'name=x',
    });
    expect(form.status).toBe(415);
    expect((await httpError(admin.revokeApiKey('idg_unknown0'))).status).toBe(404);
  });
});
