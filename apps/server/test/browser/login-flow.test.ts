import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAuthorizationRequest, createIdgateClient, parseAuthorizationResponse } from '@idgate/sdk';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, startRelyingParty } from '../helpers/browser.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { toolPath } from '../helpers/tools.js';

// Found once for the run (IDGATE_CHROMIUM, /usr/bin/chromium, PATH); missing, these tests skip (on CI, the run fails).
const CHROMIUM = toolPath('chromium');

describe.skipIf(CHROMIUM === undefined)('sign-in with a real browser (Chromium)', () => {
  let t: TestServer;
  let browser: Browser;
  let relyingParty: Awaited<ReturnType<typeof startRelyingParty>>;
  let callbackBase: string;
  let client: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    const [sqlite] = testDatabaseUrls();
    t = await startTestServer(sqlite as typeof testDatabaseUrls extends () => (infer K)[] ? K : never);
    await t.addUser('jo', 'battery-staple-cd4bd3', { displayName: 'Jo', groups: ['ops'] });
    relyingParty = await startRelyingParty('Back at the application');
    callbackBase = relyingParty.callback;
    client = await t.addClient({
      name: 'Ops Console',
      grants: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'groups'],
      redirectUris: [callbackBase],
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await relyingParty?.close();
    await t?.close();
  });

  it('signs in, consents, returns to the application, and the code buys tokens', async () => {
    const request = await createAuthorizationRequest({
      issuer: t.issuer,
      clientId: client.clientId,
      redirectUri: callbackBase,
      scope: 'openid profile groups',
    });
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();

    await page.goto(request.url.toString());
    await expect(page.getByRole('heading', { name: 'Sign in' }).isVisible()).resolves.toBe(true);
    expect(await page.getByText('to continue to Ops Console').isVisible()).toBe(true);
    await page.screenshot({ path: join(tmpdir(), 'idgate-login.png') });

    await page.getByLabel('Username').fill('jo');
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect(await page.getByRole('alert').textContent()).toBe('Invalid username or password.');
    expect(await page.getByLabel('Username').inputValue()).toBe('jo');

    await page.getByLabel('Password').fill('battery-staple-cd4bd3');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Allow Ops Console?' }).waitFor();
    expect(await page.getByRole('listitem').allTextContents()).toEqual([
      'Know who you are (your user id)',
      'See your username and name',
      'See the groups you belong to',
    ]);
    await page.screenshot({ path: join(tmpdir(), 'idgate-consent.png') });
    await page.getByRole('button', { name: 'Allow' }).click();

    await page.getByRole('heading', { name: 'Back at the application' }).waitFor();
    const { code } = parseAuthorizationResponse(page.url(), { state: request.state, issuer: t.issuer });
    const cookies = await context.cookies();
    const session = cookies.find((cookie) => cookie.name === 'idgate_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/oauth' });

    const idgate = createIdgateClient({ baseUrl: t.baseUrl });
    const tokens = await idgate.exchangeCode({
      code,
      redirectUri: callbackBase,
      codeVerifier: request.codeVerifier,
      clientId: client.clientId,
      clientSecret: client.clientSecret,
    });
    expect(await idgate.userinfo(tokens.access_token)).toMatchObject({
      preferred_username: 'jo',
      name: 'Jo',
      groups: ['ops'],
    });

    // The same browser comes back: no form, no consent, straight to the application.
    const again = await createAuthorizationRequest({
      issuer: t.issuer,
      clientId: client.clientId,
      redirectUri: callbackBase,
      scope: 'openid profile groups',
    });
    await page.goto(again.url.toString());
    await page.getByRole('heading', { name: 'Back at the application' }).waitFor();
    expect(parseAuthorizationResponse(page.url(), { state: again.state, issuer: t.issuer }).code).toEqual(
      expect.any(String),
    );
    await context.close();
  });
});
