import { DEVICE_CODE_GRANT_TYPE, DeviceAuthorizationResponse } from '@idgate/schema';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, testClock } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { readForm, UserAgent } from '../helpers/user-agent.js';

describe.each(testDatabaseUrls())('RFC 8628 device authorization grant over HTTP on $name', (kind) => {
  let t: TestApp;
  const clock = testClock();
  let kubectl: { clientId: string };

  beforeAll(async () => {
    t = await startTestApp(
      kind,
      {
        trustProxy: 1,
        bruteForce: { maxFailures: 5, windowSeconds: 900, maxFailuresPerAddress: 3 },
        device: { codeTtl: 300, interval: 2 },
      },
      { clock },
    );
    await t.addUser('dora', 'battery-staple-5a9213', { groups: ['platform'] });
    kubectl = await t.addClient({
      name: 'kubectl <cli>',
      public: true,
      grants: [DEVICE_CODE_GRANT_TYPE, 'refresh_token'],
      scopes: ['openid', 'groups', 'offline_access'],
      audiences: ['cluster-a', 'cluster-b'],
    });
  });
  afterAll(async () => t?.close());

  const form = (body: Record<string, string>, headers: Record<string, string> = {}) => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(body).toString(),
  });
  async function start(body: Record<string, string> = {}) {
    const response = await t.fetch(
      `${t.issuer}/device_authorization`,
      form({ client_id: kubectl.clientId, scope: 'openid groups offline_access', ...body }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    return DeviceAuthorizationResponse.parse(await response.json());
  }
  async function poll(deviceCode: string, clientId = kubectl.clientId) {
    const response = await t.fetch(
      `${t.issuer}/token`,
      form({ grant_type: DEVICE_CODE_GRANT_TYPE, device_code: deviceCode, client_id: clientId }),
    );
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }
  /** Enters a code on the verification page and follows redirects up to the next page. */
  async function enterCode(agent: UserAgent, userCode: string, address = '198.51.100.10') {
    let response = await agent.request(`${t.issuer}/device`, {
      form: { user_code: userCode },
      headers: { 'x-forwarded-for': address },
    });
    while (response.status === 303) {
      response = await agent.request(new URL(response.headers.get('location') as string, t.issuer));
    }
    return { response, html: await response.text() };
  }
  async function signInOnPage(agent: UserAgent, html: string) {
    expect(html).toContain('name="password"');
    const { action, fields } = readForm(html);
    let response = await agent.request(new URL(action, t.issuer), {
      form: { ...fields, username: 'dora', password: 'battery-staple-5a9213' },
    });
    while (response.status === 303) {
      response = await agent.request(new URL(response.headers.get('location') as string, t.issuer));
    }
    return { response, html: await response.text() };
  }
  async function decide(agent: UserAgent, html: string, decision: 'allow' | 'deny') {
    const { action, fields } = readForm(html);
    const response = await agent.request(new URL(action, t.issuer), { form: { ...fields, decision } });
    return { response, html: await response.text() };
  }

  it('advertises the device authorization endpoint and the grant type in discovery', async () => {
    const metadata = (await (await t.fetch(`${t.issuer}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(metadata.device_authorization_endpoint).toBe(`${t.issuer}/device_authorization`);
    expect(metadata.grant_types_supported).toContain(DEVICE_CODE_GRANT_TYPE);
  });

  it('answers codes with the configured lifetime and interval, and verification URIs on the issuer', async () => {
    const response = await start();
    expect(response.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(response.verification_uri).toBe(`${t.issuer}/device`);
    expect(response.verification_uri_complete).toBe(`${t.issuer}/device?user_code=${response.user_code}`);
    expect(response.expires_in).toBe(300);
    expect(response.interval).toBe(2);
  });

  it('refuses bad device authorization requests with OAuth JSON errors', async () => {
    const unknown = await t.fetch(`${t.issuer}/device_authorization`, form({ client_id: 'nobody' }));
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toMatchObject({ error: 'invalid_client' });
    const scope = await t.fetch(
      `${t.issuer}/device_authorization`,
      form({ client_id: kubectl.clientId, scope: 'openid admin' }),
    );
    expect(await scope.json()).toMatchObject({ error: 'invalid_scope' });
    const json = await t.fetch(`${t.issuer}/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: kubectl.clientId }),
    });
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ error: 'invalid_request' });
    const web = await t.addClient({ grants: ['client_credentials'] });
    const unauthorized = await t.fetch(
      `${t.issuer}/device_authorization`,
      form({ client_id: web.clientId, client_secret: web.clientSecret }),
    );
    expect(await unauthorized.json()).toMatchObject({ error: 'unauthorized_client' });
  });

  it('is pending, slows a hasty device down, then gives tokens once approved on the page, once', async () => {
    const device = await start({ resource: 'cluster-a' });
    expect(await poll(device.device_code)).toMatchObject({
      status: 400,
      body: { error: 'authorization_pending' },
    });
    expect(await poll(device.device_code)).toMatchObject({ status: 400, body: { error: 'slow_down' } });

    const agent = new UserAgent(t.fetch);
    const prefilled = await agent.request(device.verification_uri_complete as string);
    const prefilledHtml = await prefilled.text();
    expect(prefilled.status).toBe(200);
    expect(prefilled.headers.get('x-frame-options')).toBe('DENY');
    expect(prefilledHtml).toContain(`value="${device.user_code}"`);

    // Typed in lower case without the dash: the same code.
    const typed = device.user_code.replace('-', '').toLowerCase();
    const login = await enterCode(agent, typed);
    expect(login.html).toContain('kubectl &lt;cli&gt;');
    const confirm = await signInOnPage(agent, login.html);
    expect(confirm.response.status).toBe(200);
    expect(confirm.html).toContain('Allow kubectl &lt;cli&gt; on your device?');
    expect(confirm.html).toContain(device.user_code);
    expect(confirm.html).toContain('See the groups you belong to');
    expect(confirm.html).toContain('Audience: <strong>cluster-a</strong>');
    expect(confirm.html).not.toContain('cluster-b');
    clock.advance(10_000); // the interval is 2 + 5 s after the slow_down
    expect(await poll(device.device_code)).toMatchObject({ body: { error: 'authorization_pending' } });

    const done = await decide(agent, confirm.html, 'allow');
    expect(done.response.status).toBe(200);
    expect(done.html).toContain('You may return to your device');

    clock.advance(20_000);
    const tokens = await poll(device.device_code);
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', scope: 'openid groups offline_access' });
    expect(tokens.body.refresh_token).toEqual(expect.any(String));
    expect(decodeJwt(tokens.body.access_token as string)).toMatchObject({ aud: 'cluster-a' });
    expect(await poll(device.device_code)).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'the device code was already used' },
    });

    // The code is spent: the page says so, and the browser session is reused without a form.
    const again = await enterCode(agent, device.user_code);
    expect(again.response.status).toBe(400);
    expect(again.html).toContain('already been used');
  });

  it('reuses the browser session, and a denial reaches the device as access_denied', async () => {
    const agent = new UserAgent(t.fetch);
    const first = await start();
    const login = await enterCode(agent, first.user_code);
    await decide(agent, (await signInOnPage(agent, login.html)).html, 'allow');

    const second = await start({ scope: 'openid' });
    const confirm = await enterCode(agent, second.user_code);
    expect(confirm.html).not.toContain('name="password"');
    expect(confirm.html).toContain('Signed in as <strong>dora</strong>');
    expect(confirm.html).toContain('Audience: <strong>cluster-a</strong>');
    expect(confirm.html).toContain('Audience: <strong>cluster-b</strong>');
    const denied = await decide(agent, confirm.html, 'deny');
    expect(denied.html).toContain('The device was not given access');
    expect(await poll(second.device_code)).toMatchObject({ status: 400, body: { error: 'access_denied' } });
  });

  it('denies the device for any decision but allow, or none, as the form describes it', async () => {
    const agent = new UserAgent(t.fetch);
    for (const decision of [undefined, 'Allow', 'yes']) {
      const device = await start();
      const confirm = await enterCode(agent, device.user_code);
      const page = confirm.html.includes('name="password"')
        ? await signInOnPage(agent, confirm.html)
        : confirm;
      const { action, fields } = readForm(page.html);
      const answer = await agent.request(new URL(action, t.issuer), {
        form: decision === undefined ? fields : { ...fields, decision },
      });
      expect(answer.status).toBe(200);
      expect(await answer.text()).toContain('The device was not given access');
      expect(await poll(device.device_code)).toMatchObject({ status: 400, body: { error: 'access_denied' } });
    }
  });

  it('names a registered cluster on the confirmation page', async () => {
    await t.services.storage.clusters.create({
      name: 'alpha',
      audience: 'cluster-a',
      requireMfa: false,
      createdAt: new Date(clock.now()),
    });
    try {
      const agent = new UserAgent(t.fetch);
      const device = await start({ resource: 'cluster-a' });
      const confirm = await signInOnPage(agent, (await enterCode(agent, device.user_code)).html);
      expect(confirm.html).toContain('Cluster: <strong>alpha</strong>');
      expect(confirm.html).not.toContain('cluster-b');
    } finally {
      await t.services.storage.clusters.remove('alpha');
    }
  });

  it('refuses a decision without the page’s CSRF token', async () => {
    const agent = new UserAgent(t.fetch);
    const device = await start();
    const confirm = await signInOnPage(agent, (await enterCode(agent, device.user_code)).html);
    const { action, fields } = readForm(confirm.html);
    const forged = await agent.request(new URL(action, t.issuer), {
      form: { ...fields, csrf: 'forged', decision: 'allow' },
    });
    expect(forged.status).toBe(403);
    expect(await poll(device.device_code)).toMatchObject({ body: { error: 'authorization_pending' } });
  });

  it("answers invalid_grant for an unknown code and for another client's", async () => {
    const device = await start();
    const other = await t.addClient({ public: true, grants: [DEVICE_CODE_GRANT_TYPE] });
    expect(await poll('no-such-code')).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await poll(device.device_code, other.clientId)).toMatchObject({
      body: { error: 'invalid_grant' },
    });
  });

  it('expires codes after their lifetime: expired_token for the device, a clear message on the page', async () => {
    const device = await start();
    const agent = new UserAgent(t.fetch);
    const login = await enterCode(agent, device.user_code, '198.51.100.20');
    clock.advance(300_000);
    expect(await poll(device.device_code)).toMatchObject({ status: 400, body: { error: 'expired_token' } });
    const late = await signInOnPage(agent, login.html);
    expect(late.response.status).toBe(400);
    expect(late.html).toContain('not valid or has expired');
    const typed = await enterCode(agent, device.user_code, '198.51.100.20');
    expect(typed.response.status).toBe(400);
    expect(typed.html).toContain('not valid or has expired');
  });

  it('rate limits wrong user codes per address with 429 and Retry-After', async () => {
    const agent = new UserAgent(t.fetch);
    const device = await start();
    for (const guess of ['BCDF-BCDF', 'CDFG-CDFG', 'DFGH-DFGH']) {
      const wrong = await enterCode(agent, guess, '203.0.113.99');
      expect(wrong.response.status).toBe(400);
      expect(wrong.html).toContain('not valid or has expired');
    }
    const locked = await enterCode(agent, device.user_code, '203.0.113.99');
    expect(locked.response.status).toBe(429);
    expect(locked.response.headers.get('retry-after')).toBe('900');
    expect(locked.html).toContain('Too many wrong codes');
    // Another address is not affected.
    const elsewhere = await enterCode(agent, device.user_code, '203.0.113.100');
    expect(elsewhere.html).toContain('name="password"');
  });
});

describe.each(testDatabaseUrls())(
  'RFC 8628 §5.1: wrong user codes from every address together, on $name',
  (kind) => {
    let t: TestApp;
    const clock = testClock();
    let clientId: string;

    beforeAll(async () => {
      t = await startTestApp(
        kind,
        {
          trustProxy: 1,
          bruteForce: { windowSeconds: 900, maxFailuresPerAddress: 3, maxWrongUserCodes: 6 },
          device: { codeTtl: 3600 },
        },
        { clock },
      );
      ({ clientId } = await t.addClient({
        public: true,
        grants: [DEVICE_CODE_GRANT_TYPE],
        scopes: ['openid'],
      }));
    });
    afterAll(async () => t?.close());

    async function start() {
      const response = await t.fetch(`${t.issuer}/device_authorization`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: clientId, scope: 'openid' }).toString(),
      });
      return DeviceAuthorizationResponse.parse(await response.json());
    }
    async function enterCode(userCode: string, address: string) {
      const response = await new UserAgent(t.fetch).request(`${t.issuer}/device`, {
        form: { user_code: userCode },
        headers: { 'x-forwarded-for': address, 'user-agent': 'curl/8.5' },
      });
      return {
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        html: await response.text(),
      };
    }
    const locked = (html: string) => html.includes('no code is accepted for now');

    it('stops reading codes once all addresses together reach the budget, says so, and records it; the window ends it', async () => {
      const device = await start();
      // Six addresses, two wrong codes each: every one under its own budget of three.
      for (let round = 0; round < 2; round++) {
        for (let i = 1; i <= 3; i++) {
          clock.advance(1000);
          const wrong = await enterCode('BCDF-BCDF', `203.0.113.${i}`);
          expect(wrong.status).toBe(400);
          expect(wrong.html).toContain('not valid or has expired');
        }
      }
      // A person with the right code, from an address that never typed a wrong one.
      const refused = await enterCode(device.user_code, '198.51.100.7');
      expect(refused.status).toBe(429);
      expect(refused.retryAfter).toBe('900');
      expect(locked(refused.html)).toBe(true);
      expect(refused.html).toContain('Try again in 15 minutes.');

      const events = await t.services.storage.auditEvents.list({ limit: 10, types: ['device.locked'] });
      expect(events).toEqual([
        expect.objectContaining({
          type: 'device.locked',
          outcome: 'failure',
          address: '198.51.100.7',
          userAgent: 'curl/8.5',
          details: { scope: 'all', retryAfterSeconds: 900 },
        }),
      ]);

      // Hammering the locked page does not keep it locked: only codes it read count.
      clock.advance(600_000);
      for (let i = 0; i < 2; i++) expect((await enterCode('CDFG-CDFG', '192.0.2.50')).status).toBe(429);
      const later = await enterCode(device.user_code, '198.51.100.7');
      expect([later.status, later.retryAfter]).toEqual([429, '300']);
      clock.advance(300_000);
      const open = await enterCode(device.user_code, '198.51.100.7');
      expect(open.status).toBe(303);
    });

    it('tells an address over its own budget so, as before, and not as a lock of every address', async () => {
      clock.advance(3_600_000);
      for (let i = 0; i < 3; i++) await enterCode('DFGH-DFGH', '203.0.113.200');
      const own = await enterCode('DFGH-DFGH', '203.0.113.200');
      expect(own.status).toBe(429);
      expect(own.html).toContain('Too many wrong codes.');
      expect(locked(own.html)).toBe(false);
    });
  },
);
