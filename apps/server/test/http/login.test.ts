import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, testClock } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { readForm, signIn, UserAgent } from '../helpers/user-agent.js';

const REDIRECT = 'https://app.example.test/cb';

describe.each(testDatabaseUrls())('the login page on $name', (kind) => {
  let t: TestApp;
  const clock = testClock();
  let client: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    t = await startTestApp(
      kind,
      {
        bruteForce: { maxFailures: 3, windowSeconds: 900, maxFailuresPerAddress: 1000 },
      },
      { clock },
    );
    await t.addUser('gwen', 'battery-staple-11f033');
    await t.addUser('hank', 'battery-staple-5889dc');
    await t.addUser('ivy', 'battery-staple-316708');
    client = await t.addClient({
      name: 'Grafana <script>',
      grants: ['authorization_code', 'password'],
      trusted: true,
      scopes: ['openid'],
      redirectUris: [REDIRECT],
    });
  });
  afterAll(async () => t?.close());

  async function openLogin(agent = new UserAgent(t.fetch)) {
    const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
    const params = {
      client_id: client.clientId,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid',
      state: 'x',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    };
    const redirect = await agent.request(`${t.issuer}/authorize?${new URLSearchParams(params)}`);
    expect(redirect.status).toBe(303);
    const loginUrl = new URL(redirect.headers.get('location') as string, t.issuer);
    const page = await agent.request(loginUrl);
    return { agent, loginUrl, page, html: await page.text() };
  }

  it('is an accessible form with security headers, escaping what it shows', async () => {
    const { page, html } = await openLogin();
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    // The form posts to idgate, whose answer may redirect only to this client's origin.
    expect(page.headers.get('content-security-policy')).toContain(
      "form-action 'self' https://app.example.test",
    );
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(html).toContain('<html lang="en">');
    expect(html).toContain('name="viewport"');
    expect(html).toContain('<label for="username">Username</label>');
    expect(html).toContain('<label for="password">Password</label>');
    expect(html).toContain('autocomplete="current-password"');
    expect(html).toContain('Grafana &lt;script&gt;');
    // The client's name is escaped; an http issuer not on localhost cannot have passkeys, so its
    // page has no passkey form and no script (test/browser/passkeys.test.ts has the one with them).
    expect(html).not.toContain('<script');
    expect(html).toContain('autocomplete="username"');
    const script = await t.fetch(`${t.issuer}/assets/passkey.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toContain('navigator.credentials.get');
    const css = await t.fetch(`${t.issuer}/assets/idgate.css`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('shows one generic message for a wrong password and an unknown user, keeping the username', async () => {
    const { agent, html } = await openLogin();
    const { action, fields } = readForm(html);
    const wrong = await agent.request(new URL(action, t.issuer), {
      form: { ...fields, username: 'hank', password: 'nope' },
    });
    const wrongHtml = await wrong.text();
    expect(wrong.status).toBe(401);
    expect(wrongHtml).toContain('role="alert"');
    expect(wrongHtml).toContain('Invalid username or password.');
    expect(wrongHtml).toContain('value="hank"');
    const unknown = await agent.request(new URL(action, t.issuer), {
      form: { ...fields, username: 'nobody-here', password: 'nope' },
    });
    expect(await unknown.text()).toContain('Invalid username or password.');
  });

  it('refuses a form without the CSRF token, or from another browser', async () => {
    const { agent, html, loginUrl } = await openLogin();
    const { action, fields } = readForm(html);
    // Storage keeps only a hash of the token the page carries.
    const stored = await t.services.storage.interactions.findById(
      loginUrl.searchParams.get('interaction') as string,
    );
    expect(stored?.csrfTokenHash).toBeDefined();
    expect(stored?.csrfTokenHash).not.toBe(fields.csrf);
    expect(JSON.stringify(stored)).not.toContain(fields.csrf as string);
    const forged = await agent.request(new URL(action, t.issuer), {
      form: { ...fields, csrf: 'forged', username: 'gwen', password: 'battery-staple-11f033' },
    });
    expect(forged.status).toBe(403);
    const stranger = await new UserAgent(t.fetch).request(new URL(action, t.issuer), {
      form: { ...fields, username: 'gwen', password: 'battery-staple-11f033' },
    });
    expect(stranger.status).toBe(400);
    expect(await stranger.text()).toContain('expired or was started in another browser');
  });

  it('refuses an unknown or foreign interaction id on GET', async () => {
    const { loginUrl } = await openLogin();
    const foreign = await new UserAgent(t.fetch).request(loginUrl);
    expect(foreign.status).toBe(400);
    expect(
      (await new UserAgent(t.fetch).request(`${t.issuer}/login?interaction=${'x'.repeat(500)}`)).status,
    ).toBe(400);
  });

  it('locks an account after repeated failures, with Retry-After, also against the right password; and the password grant says 429; until Retry-After has passed', async () => {
    const { agent, html } = await openLogin();
    const { action, fields } = readForm(html);
    for (let i = 0; i < 3; i++) {
      const response = await agent.request(new URL(action, t.issuer), {
        form: { ...fields, username: 'IVY', password: `wrong-${i}` },
      });
      expect(response.status).toBe(401);
    }
    const locked = await agent.request(new URL(action, t.issuer), {
      form: { ...fields, username: 'ivy', password: 'battery-staple-316708' },
    });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(800);
    expect(await locked.text()).toContain('Too many failed sign-ins. Try again in 15 minutes.');

    const grant = await t.fetch(`${t.issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`,
      },
      body: new URLSearchParams({
        grant_type: 'password',
        username: 'ivy',
        password: 'battery-staple-316708',
      }),
    });
    expect(grant.status).toBe(429);
    const retryAfter = Number(grant.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(800);
    expect(await grant.json()).toMatchObject({ error: 'invalid_grant' });

    const records = await t.services.storage.loginAttempts.listByUsername('ivy', 10);
    expect(records.map((r) => r.reason)).toEqual([
      'locked',
      'locked',
      'invalid_credentials',
      'invalid_credentials',
      'invalid_credentials',
    ]);
    expect(records.every((r) => r.sourceAddress === '127.0.0.1')).toBe(true);

    // No waiting a quarter of an hour: the clock moves on, and the right password works again.
    clock.advance(retryAfter * 1000);
    const later = await openLogin();
    const form = readForm(later.html);
    const unlocked = await later.agent.request(new URL(form.action, t.issuer), {
      form: { ...form.fields, username: 'ivy', password: 'battery-staple-316708' },
    });
    expect(unlocked.status).toBe(303);
  });

  it('a successful sign-in resets the count', async () => {
    const { agent, html } = await openLogin();
    const { action, fields } = readForm(html);
    for (let i = 0; i < 2; i++)
      await agent.request(new URL(action, t.issuer), {
        form: { ...fields, username: 'gwen', password: 'bad' },
      });
    const ok = await agent.request(new URL(action, t.issuer), {
      form: { ...fields, username: 'gwen', password: 'battery-staple-11f033' },
    });
    expect(ok.status).toBe(303);
    const again = await openLogin();
    const form = readForm(again.html);
    for (let i = 0; i < 2; i++) {
      const response = await again.agent.request(new URL(form.action, t.issuer), {
        form: { ...form.fields, username: 'gwen', password: 'bad' },
      });
      expect(response.status).toBe(401);
    }
  });

  it('signs in without an application and remembers the browser', async () => {
    const agent = new UserAgent(t.fetch);
    const page = await agent.request(`${t.issuer}/login`);
    const { action, fields } = readForm(await page.text());
    const done = await agent.request(new URL(action, t.issuer), {
      form: { ...fields, username: 'hank', password: 'battery-staple-5889dc' },
    });
    expect(await done.text()).toContain('You are signed in as hank.');
    const session = agent.cookies.get('idgate_session');
    expect(session?.path).toBe('/oauth');
    // Coming back to the login page says who is signed in instead of asking again.
    expect(await (await agent.request(`${t.issuer}/login`)).text()).toContain('You are signed in as hank.');
    const result = await signIn(
      agent,
      `${t.issuer}/authorize?${new URLSearchParams({ client_id: client.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })}`,
      { redirectPrefix: REDIRECT },
    );
    expect(result.sawLogin).toBe(false);
  });

  it('sets HttpOnly, SameSite=Lax cookies scoped to the issuer path', async () => {
    const agent = new UserAgent(t.fetch);
    const response = await agent.request(`${t.issuer}/login`);
    const cookie = response.headers.getSetCookie()[0] as string;
    expect(cookie).toMatch(/^idgate_ix_[A-Za-z0-9_-]+=/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookie).toContain('Path=/oauth');
    expect(cookie).not.toContain('Secure');
  });
});
