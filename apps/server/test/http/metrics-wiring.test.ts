import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe.each(testDatabaseUrls())('metrics counted by the routes themselves on $name', (kind) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(kind);
  });
  afterAll(async () => t?.close());

  it('counts token reviews by outcome and password sign-ins by outcome', async () => {
    const apiKey = await t.addApiKey(['tokenreview']);
    await t.addUser('nina', 'battery-staple-d995d4');
    const client = await t.addClient({ grants: ['password'], trusted: true, scopes: ['openid'] });
    const grant = (password: string) =>
      fetch(`${t.issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`,
        },
        body: new URLSearchParams({ grant_type: 'password', username: 'nina', password }),
      });
    const { access_token } = (await (await grant('battery-staple-d995d4')).json()) as {
      access_token: string;
    };
    await grant('wrong');
    const review = (token: string) =>
      fetch(`${t.issuer}/authenticate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          spec: { token },
        }),
      });
    await review(access_token);
    await review(access_token);
    await review('garbage');
    const text = await (await fetch(`${t.baseUrl}/metrics`)).text();
    expect(text).toContain('idgate_token_reviews_total{outcome="authenticated"} 2');
    expect(text).toContain('idgate_token_reviews_total{outcome="denied"} 1');
    expect(text).toMatch(/idgate_logins_total\{provider="password",outcome="success"\} 1/);
    expect(text).toMatch(/idgate_logins_total\{provider="password",outcome="failure"\} 1/);
    expect(text).not.toContain(access_token);
  });
});
