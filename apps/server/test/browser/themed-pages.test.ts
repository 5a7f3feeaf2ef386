import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAuthorizationRequest } from '@idgate/sdk';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, startRelyingParty } from '../helpers/browser.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { toolPath } from '../helpers/tools.js';

const CHROMIUM = toolPath('chromium');
const LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40"><rect width="120" height="40" rx="6" fill="#0f766e"/><text x="60" y="26" font-size="16" text-anchor="middle" fill="#fff">ACME</text></svg>';

describe.skipIf(CHROMIUM === undefined)(
  "a German speaker signs in on the operator's themed pages (Chromium)",
  () => {
    let t: TestServer;
    let browser: Browser;
    let app: Awaited<ReturnType<typeof startRelyingParty>>;
    let callback: string;
    let dir: string;
    let client: { clientId: string };

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'idgate-theme-'));
      writeFileSync(join(dir, 'acme.svg'), LOGO);
      const [sqlite] = testDatabaseUrls();
      t = await startTestServer(sqlite as Parameters<typeof startTestServer>[0], {
        ui: { productName: 'ACME Login', logoFile: join(dir, 'acme.svg'), primaryColor: '#0f766e' },
      });
      await t.addUser('jonas', 'battery-staple-de-7731', { displayName: 'Jonas' });
      app = await startRelyingParty('Zurück in der Anwendung');
      callback = app.callback;
      client = await t.addClient({
        name: 'Wiki',
        grants: ['authorization_code'],
        scopes: ['openid', 'profile'],
        redirectUris: [callback],
      });
      browser = await launchChromium();
    });
    afterAll(async () => {
      await browser?.close();
      await app?.close();
      await t?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('reads every page in German, with the logo and the colours, and gets back to the application', async () => {
      const context = await browser.newContext({ locale: 'de-DE', viewport: { width: 390, height: 844 } });
      const page = await context.newPage();
      const request = await createAuthorizationRequest({
        issuer: t.issuer,
        clientId: client.clientId,
        redirectUri: callback,
        scope: 'openid profile',
      });
      await page.goto(request.url.toString());
      await page.getByRole('heading', { name: 'Anmelden' }).waitFor();
      expect(await page.title()).toBe('Anmelden · ACME Login');
      // The logo loads (the pages' policy allows images from idgate only) and the button wears the operator's colour.
      const logo = page.locator('header.brand img');
      await expect
        .poll(() =>
          logo.evaluate((img) => {
            const image = img as unknown as { complete: boolean; naturalWidth: number };
            return image.complete && image.naturalWidth;
          }),
        )
        .toBe(120);
      const button = page.getByRole('button', { name: 'Anmelden' });
      expect(
        await button.evaluate((element) => {
          const view = globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } };
          return view.getComputedStyle(element).backgroundColor;
        }),
      ).toBe('rgb(15, 118, 110)');
      await page.screenshot({ path: join(tmpdir(), 'idgate-login-de.png') });

      await page.getByLabel('Benutzername').fill('jonas');
      await page.getByLabel('Passwort').fill('falsch');
      await button.click();
      expect(await page.getByRole('alert').textContent()).toBe('Benutzername oder Passwort ist falsch.');
      await page.getByLabel('Passwort').fill('battery-staple-de-7731');
      await page.getByRole('button', { name: 'Anmelden' }).click();

      await page.getByRole('heading', { name: 'Wiki erlauben?' }).waitFor();
      expect(await page.getByRole('listitem').allTextContents()).toEqual([
        'Wissen, wer Sie sind (Ihre Benutzer-ID)',
        'Ihren Benutzernamen und Namen sehen',
      ]);
      await page.screenshot({ path: join(tmpdir(), 'idgate-consent-de.png') });
      await page.getByRole('button', { name: 'Erlauben' }).click();
      await page.getByRole('heading', { name: 'Zurück in der Anwendung' }).waitFor();
      await context.close();
    });
  },
);
