import { createIdgateClient, type IdgateClient } from '@idgate/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';

describe.each(testDatabaseUrls())('admin signing key API on $name', (kind) => {
  let t: TestApp;
  let admin: IdgateClient;

  beforeAll(async () => {
    t = await startTestApp(kind);
    admin = createIdgateClient({ baseUrl: t.baseUrl, apiKey: await t.addApiKey(['admin']), fetch: t.fetch });
  });
  afterAll(async () => t?.close());

  it('lists the keys with their state, rotates, and publishes the new key in JWKS', async () => {
    const before = await admin.listSigningKeys();
    expect(before.nextCursor).toBeNull();
    const active = before.items.filter((k) => k.state === 'active');
    expect(active.length).toBeGreaterThan(0);
    const { created, retired } = await admin.rotateSigningKeys();
    expect(created.state).toBe('active');
    expect(retired).toEqual(active.map((k) => k.kid));
    const after = await admin.listSigningKeys();
    expect(after.items[0]?.kid).toBe(created.kid);
    for (const kid of retired)
      expect(after.items.find((k) => k.kid === kid)).toMatchObject({
        state: 'retired',
        retiredAt: expect.any(String),
      });
    expect(JSON.stringify(after)).not.toMatch(/"d"|private/);
    const jwks = (await (await t.fetch(`${t.baseUrl}/oauth/keys`)).json()) as { keys: { kid: string }[] };
    expect(jwks.keys.map((k) => k.kid)).toContain(created.kid);
  });

  it('refuses without an admin key', async () => {
    const anonymous = createIdgateClient({ baseUrl: t.baseUrl, fetch: t.fetch });
    await expect(anonymous.listSigningKeys()).rejects.toThrow(/needs an API key/);
    expect((await t.fetch(`${t.baseUrl}/admin/v1/signing-keys/rotate`, { method: 'POST' })).status).toBe(401);
  });
});
