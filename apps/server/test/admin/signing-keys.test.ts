import { createIdgateAdminClient, type IdgateAdminClient } from '@idgate/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, testClock } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';

describe.each(testDatabaseUrls())('admin signing key API on $name', (kind) => {
  let t: TestApp;
  let admin: IdgateAdminClient;
  const clock = testClock();

  beforeAll(async () => {
    t = await startTestApp(kind, { signing: { activationDelay: 10 } }, { clock });
    admin = createIdgateAdminClient({
      baseUrl: t.baseUrl,
      apiKey: await t.addApiKey(['admin']),
      fetch: t.fetch,
    });
  });
  afterAll(async () => t?.close());

  it('lists the keys with their state, rotates, and publishes the new key in JWKS before it signs', async () => {
    // The first key has signed for longer than the activation delay (a rotation right at first
    // start has no older key to keep signing: the new one signs at once, as the key ring does).
    clock.advance(60_000);
    const before = await admin.listSigningKeys();
    expect(before.nextCursor).toBeNull();
    const active = before.items.filter((k) => k.state === 'active');
    expect(active.length).toBeGreaterThan(0);
    const { created, retired } = await admin.rotateSigningKeys();
    // Published at once, signing after the activation delay: until then the old key still signs.
    expect(created.state).toBe('next');
    expect(retired).toEqual(active.map((k) => k.kid));
    const during = await admin.listSigningKeys();
    expect(during.items.map((k) => k.state)).toEqual(['next', 'active']);
    clock.advance(10_000);
    const after = await admin.listSigningKeys();
    expect(after.items[0]).toMatchObject({ kid: created.kid, state: 'active' });
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
    expect(() => createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: '', fetch: t.fetch })).toThrow(
      /needs an API key/,
    );
    expect((await t.fetch(`${t.baseUrl}/admin/v1/signing-keys/rotate`, { method: 'POST' })).status).toBe(401);
  });
});
