import { createAuthorizationRequest, createIdgateClient, parseAuthorizationResponse } from '@idgate/sdk';
import { decodeJwt } from 'jose';
import { generateSync } from 'otplib';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testClock } from '../helpers/app.js';
import { launchChromium, startRelyingParty } from '../helpers/browser.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { toolPath } from '../helpers/tools.js';

const CHROMIUM = toolPath('chromium');
const PASSWORD = 'battery-staple-a81d07';

describe.skipIf(CHROMIUM === undefined)('a TOTP second factor in a real browser (Chromium)', () => {
  let t: TestServer;
  let browser: Browser;
  let relyingParty: Awaited<ReturnType<typeof startRelyingParty>>;
  let client: { clientId: string; clientSecret: string };
  const clock = testClock();
  // otplib computes what the authenticator app would show, at idgate's (injected) time.
  const code = (secret: string) => generateSync({ secret, epoch: Math.floor(clock.now() / 1000) });

  beforeAll(async () => {
    const [sqlite] = testDatabaseUrls();
    t = await startTestServer(
      sqlite as typeof testDatabaseUrls extends () => (infer K)[] ? K : never,
      {},
      { clock },
    );
    await t.addUser('lu', PASSWORD);
    relyingParty = await startRelyingParty('Back at the application');
    client = await t.addClient({
      name: 'Ops Console',
      grants: ['authorization_code'],
      trusted: true,
      scopes: ['openid'],
      redirectUris: [relyingParty.callback],
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await relyingParty?.close();
    await t?.close();
  });

  it('enrols an authenticator app on the account page, then signs in with its code', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    page.setDefaultTimeout(5000);
    await page.goto(`${t.issuer}/login`);
    await page.getByLabel('Username').fill('lu');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Signed in' }).waitFor();

    await page.goto(`${t.issuer}/account`);
    expect(await page.getByText('You have no second factor yet.').isVisible()).toBe(true);
    await page.getByLabel('Name').fill('my phone');
    await page.getByRole('button', { name: 'Add an authenticator app' }).click();
    await page.getByRole('heading', { name: 'Set up an authenticator app' }).waitFor();
    expect(await page.getByRole('img', { name: 'QR code for your authenticator app' }).isVisible()).toBe(
      true,
    );
    const secret = ((await page.locator('#totp-secret').textContent()) ?? '').replaceAll(' ', '');
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    await page.getByLabel('Code', { exact: true }).fill('000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    expect(await page.getByRole('alert').textContent()).toBe('That code is not valid. Each code works once.');
    // A wrong code starts over with a new key.
    const fresh = ((await page.locator('#totp-secret').textContent()) ?? '').replaceAll(' ', '');
    expect(fresh).not.toBe(secret);
    await page.getByLabel('Code', { exact: true }).fill(code(fresh));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    expect(await page.locator('.recovery-codes li').count()).toBe(10);
    await page.getByRole('link', { name: 'Continue' }).click();
    expect(await page.getByText('my phone').first().isVisible()).toBe(true);
    expect(await page.getByText('10 unused recovery codes left.').isVisible()).toBe(true);
    await context.close();

    // A new browser: the password, then the code.
    clock.advance(30_000);
    const request = await createAuthorizationRequest({
      issuer: t.issuer,
      clientId: client.clientId,
      redirectUri: relyingParty.callback,
      scope: 'openid',
    });
    const next = await (await browser.newContext()).newPage();
    next.setDefaultTimeout(5000);
    await next.goto(request.url.toString());
    await next.getByLabel('Username').fill('lu');
    await next.getByLabel('Password').fill(PASSWORD);
    await next.getByRole('button', { name: 'Sign in' }).click();
    await next.getByRole('heading', { name: 'Two-step verification' }).waitFor();
    await next.getByLabel('Code', { exact: true }).fill(code(fresh));
    await next.getByRole('button', { name: 'Verify' }).click();
    // The page's CSP lets its form end at the application (form-action names the redirect URI).
    await next.getByRole('heading', { name: 'Back at the application' }).waitFor();
    const { code: authorizationCode } = parseAuthorizationResponse(next.url(), {
      state: request.state,
      issuer: t.issuer,
    });
    const tokens = await createIdgateClient({ baseUrl: t.baseUrl }).exchangeCode({
      clientId: client.clientId,
      clientSecret: client.clientSecret,
      code: authorizationCode,
      redirectUri: relyingParty.callback,
      codeVerifier: request.codeVerifier,
    });
    expect(decodeJwt(tokens.id_token as string)).toMatchObject({
      acr: 'urn:idgate:acr:mfa',
      amr: ['pwd', 'otp', 'mfa'],
    });
  });
});
