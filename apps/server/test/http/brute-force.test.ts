import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';

// The password grant's brute-force protection over real HTTP: per client, per address apart from
// the browser's, and smart lockout (familiar addresses counted apart). One proxy hop is trusted so
// that the test can speak from several addresses.
describe.each(testDatabaseUrls())('password grant brute-force protection on $name', (kind) => {
  let t: TestApp;
  const clients: Record<'a' | 'b' | 'c', string> = { a: '', b: '', c: '' };

  beforeAll(async () => {
    t = await startTestApp(kind, { trustProxy: 1, bruteForce: { maxFailures: 3, maxFailuresPerClient: 6 } });
    for (const name of ['uma', 'vic']) await t.addUser(name, `a sturdy pass phrase!`);
    for (const key of ['a', 'b', 'c'] as const) {
      const client = await t.addClient({ trusted: true, grants: ['password'], scopes: ['openid'] });
      clients[key] = `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`;
    }
  });
  afterAll(async () => t?.close());

  const grant = async (client: 'a' | 'b' | 'c', username: string, password: string, from: string) => {
    const response = await t.fetch(`${t.issuer}/token`, {
      method: 'POST',
      headers: {
        authorization: clients[client],
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': from,
      },
      body: new URLSearchParams({ grant_type: 'password', username, password, scope: 'openid' }),
    });
    const body = (await response.json()) as { error?: string; error_description?: string };
    return {
      status: response.status,
      description: body.error_description,
      retryAfter: response.headers.get('retry-after'),
    };
  };

  it('smart lockout: failures from strangers lock uma out of unfamiliar addresses only', async () => {
    expect((await grant('c', 'uma', 'a sturdy pass phrase!', '198.51.100.1')).status).toBe(200);
    for (const from of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) {
      expect((await grant('c', 'uma', 'guess', from)).status).toBe(400);
    }
    expect(await grant('c', 'uma', 'a sturdy pass phrase!', '203.0.113.4')).toMatchObject({
      status: 429,
      description: 'too many failed sign-ins: the account is locked for now',
    });
    expect((await grant('c', 'uma', 'a sturdy pass phrase!', '198.51.100.1')).status).toBe(200);
  });

  it('blocks a client whose password grant keeps failing, from any address; another client is unaffected', async () => {
    for (const [i, from] of [
      '192.0.2.1',
      '192.0.2.2',
      '192.0.2.3',
      '192.0.2.4',
      '192.0.2.5',
      '192.0.2.6',
    ].entries()) {
      expect((await grant('a', `nobody-${i}`, 'guess', from)).status).toBe(400);
    }
    const blocked = await grant('a', 'vic', 'a sturdy pass phrase!', '192.0.2.9');
    expect(blocked).toMatchObject({
      status: 429,
      description: 'too many failed sign-ins through this client: try again later',
    });
    expect(Number(blocked.retryAfter)).toBeGreaterThan(0);
    expect((await grant('b', 'vic', 'a sturdy pass phrase!', '192.0.2.9')).status).toBe(200);
  });
});
