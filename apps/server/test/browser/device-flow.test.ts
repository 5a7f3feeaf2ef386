import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEVICE_CODE_GRANT_TYPE, DeviceAuthorizationResponse } from '@idgate/schema';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { toolPath } from '../helpers/tools.js';

// Found once for the run (IDGATE_CHROMIUM, /usr/bin/chromium, PATH); missing, these tests skip (on CI, the run fails).
const CHROMIUM = toolPath('chromium');

describe.skipIf(CHROMIUM === undefined)('RFC 8628 verification page in a real browser (Chromium)', () => {
  let t: TestServer;
  let browser: Browser;
  let kubectl: { clientId: string };

  beforeAll(async () => {
    const [sqlite] = testDatabaseUrls();
    t = await startTestServer(sqlite as typeof testDatabaseUrls extends () => (infer K)[] ? K : never);
    await t.addUser('kim', 'battery-staple-372d48', { groups: ['ops'] });
    kubectl = await t.addClient({
      name: 'kubectl',
      public: true,
      grants: [DEVICE_CODE_GRANT_TYPE, 'refresh_token'],
      scopes: ['openid', 'groups', 'offline_access'],
      audiences: ['prod-cluster'],
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function startDevice(scope = 'openid groups offline_access') {
    const response = await fetch(`${t.issuer}/device_authorization`, {
      method: 'POST',
      body: new URLSearchParams({ client_id: kubectl.clientId, scope }),
    });
    return DeviceAuthorizationResponse.parse(await response.json());
  }
  async function poll(deviceCode: string) {
    const response = await fetch(`${t.issuer}/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: DEVICE_CODE_GRANT_TYPE,
        device_code: deviceCode,
        client_id: kubectl.clientId,
      }),
    });
    return (await response.json()) as Record<string, unknown>;
  }
  async function signIn(page: Page) {
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.getByText('to continue to kubectl').isVisible()).toBe(true);
    await page.getByLabel('Username').fill('kim');
    await page.getByLabel('Password').fill('battery-staple-372d48');
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  it('takes a typed code, signs in, shows what is asking, and the device gets its tokens on Allow', async () => {
    const device = await startDevice();
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(device.verification_uri);
    await page.getByRole('heading', { name: 'Connect a device' }).waitFor();
    // Typed as a person might: lower case, without the dash.
    await page.getByLabel('Code').fill(device.user_code.replace('-', '').toLowerCase());
    await page.getByRole('button', { name: 'Continue' }).click();
    await signIn(page);

    await page.getByRole('heading', { name: 'Allow kubectl on your device?' }).waitFor();
    expect(await page.locator('#user-code').textContent()).toBe(device.user_code);
    expect(await page.getByRole('listitem').allTextContents()).toEqual([
      'Know who you are (your user id)',
      'See the groups you belong to',
      'Stay signed in and act for you while you are away',
      'Audience: prod-cluster',
    ]);
    await page.screenshot({ path: join(tmpdir(), 'idgate-device-confirm.png') });
    expect(await poll(device.device_code)).toMatchObject({ error: 'authorization_pending' });

    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('heading', { name: 'Device connected' }).waitFor();
    expect(await page.getByText('You may return to your device').isVisible()).toBe(true);
    const tokens = await poll(device.device_code);
    expect(tokens).toMatchObject({ token_type: 'Bearer', scope: 'openid groups offline_access' });
    expect(tokens.refresh_token).toEqual(expect.any(String));
    await context.close();
  });

  it('opens verification_uri_complete with the code filled in, and reuses the browser session', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const first = await startDevice('openid');
    await page.goto(first.verification_uri_complete as string);
    expect(await page.getByLabel('Code').inputValue()).toBe(first.user_code);
    await page.getByRole('button', { name: 'Continue' }).click();
    await signIn(page);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('heading', { name: 'Device connected' }).waitFor();

    const second = await startDevice('openid');
    await page.goto(second.verification_uri_complete as string);
    await page.getByRole('button', { name: 'Continue' }).click();
    // Signed in already: straight to the confirmation.
    await page.getByRole('heading', { name: 'Allow kubectl on your device?' }).waitFor();
    expect(await page.getByText('Signed in as kim').isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('heading', { name: 'Device connected' }).waitFor();
    expect(await poll(second.device_code)).toMatchObject({ token_type: 'Bearer' });
    await context.close();
  });

  it('denies: the page says so and the device gets access_denied', async () => {
    const device = await startDevice();
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(device.verification_uri_complete as string);
    await page.getByRole('button', { name: 'Continue' }).click();
    await signIn(page);
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.getByRole('heading', { name: 'Device denied' }).waitFor();
    expect(await poll(device.device_code)).toMatchObject({ error: 'access_denied' });
    await context.close();
  });

  it('shows a wrong code as an alert next to the field, keeping what was typed', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${t.issuer}/device`);
    await page.getByLabel('Code').fill('BBBB-BBBB');
    await page.getByRole('button', { name: 'Continue' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('That code is not valid or has expired.');
    expect(await page.getByLabel('Code').inputValue()).toBe('BBBB-BBBB');
    await context.close();
  });
});
