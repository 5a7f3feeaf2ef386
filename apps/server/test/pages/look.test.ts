import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProviderMetadata } from '@idgate/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preferredLocale } from '../../src/pages/i18n.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { pkceAuthorizationUrl, UserAgent } from '../helpers/user-agent.js';

const LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><rect width="40" height="40" fill="#a00"/></svg>';

describe('preferredLocale', () => {
  it.each([
    ['de-CH, en;q=0.8', 'de'],
    ['fr-CA, de;q=0.8, en;q=0.9', 'en'],
    ['fr, *;q=0.5', undefined],
    ['en;q=0, de;q=0.1', 'de'],
    ['de en', 'de'],
    ['DE-at', 'de'],
    ['', undefined],
  ])('%j → %s', (list, locale) => {
    expect(preferredLocale(list)).toBe(locale);
  });
});

describe.each(testDatabaseUrls())(
  "the pages in the operator's look and the person's language on $name",
  (kind) => {
    let t: TestApp;
    let dir: string;
    let client: { clientId: string };
    const RP = 'https://app.example.test/cb';

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'idgate-look-'));
      writeFileSync(join(dir, 'logo.svg'), LOGO);
      t = await startTestApp(kind, {
        ui: {
          productName: 'Acme Sign-In',
          logoFile: join(dir, 'logo.svg'),
          primaryColor: '#a00',
          backgroundColor: '#fafafa',
        },
      });
      client = await t.addClient({
        name: 'Wiki',
        grants: ['authorization_code'],
        scopes: ['openid'],
        redirectUris: [RP],
      });
    });
    afterAll(async () => {
      await t?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** The login page an authorization request with `params` leads `agent` to. */
    async function loginPage(agent: UserAgent, params: Record<string, string> = {}): Promise<string> {
      const { url } = pkceAuthorizationUrl(t.issuer, {
        client_id: client.clientId,
        redirect_uri: RP,
        scope: 'openid',
        ...params,
      });
      const first = await agent.request(url);
      expect(first.status).toBe(303);
      return (await agent.request(new URL(first.headers.get('location') as string, url))).text();
    }

    it('name the product and show its logo, served by idgate with a policy that runs nothing', async () => {
      const page = await loginPage(new UserAgent(t.fetch));
      expect(page).toContain('<title>Sign in · Acme Sign-In</title>');
      expect(page).toContain(
        '<header class="brand"><img src="/oauth/assets/logo" alt="" class="logo"><span>Acme Sign-In</span></header>',
      );
      const logo = await t.fetch(`${t.issuer}/assets/logo`);
      expect(logo.status).toBe(200);
      expect(logo.headers.get('content-type')).toBe('image/svg+xml');
      expect(logo.headers.get('content-security-policy')).toBe(
        "default-src 'none'; style-src 'unsafe-inline'; sandbox",
      );
      expect(await logo.text()).toBe(LOGO);
    });

    it("paint buttons and the background in the operator's colours", async () => {
      const css = await (await t.fetch(`${t.issuer}/assets/idgate.css`)).text();
      expect(css).toContain('background:#fafafa;');
      expect(css).toContain('border-radius:.5rem;background:#a00;color:#fff;');
      expect(css).toContain('outline:3px solid #a00;');
    });

    it("speak the browser's language, and the one the application asks for with ui_locales", async () => {
      const german = await loginPage(
        new UserAgent(async (url, init) => t.fetch(url, withLanguage(init, 'de-DE,de;q=0.9,en;q=0.5'))),
      );
      expect(german).toContain('<html lang="de">');
      expect(german).toContain('<h1>Anmelden</h1>');
      expect(german).toContain('<label for="username">Benutzername</label>');
      expect(german).toContain('um mit <strong>Wiki</strong> fortzufahren');

      // The application's choice wins over the browser's, for the rest of the sign-in.
      const agent = new UserAgent(async (url, init) => t.fetch(url, withLanguage(init, 'en-US')));
      const asked = await loginPage(agent, { ui_locales: 'fr-CA de' });
      expect(asked).toContain('<h1>Anmelden</h1>');
      const wrong = await agent.request(`${t.issuer}/login?interaction=nope`);
      expect(await wrong.text()).toContain('<h1>Anmeldung fehlgeschlagen</h1>');

      // Nothing it speaks: the default language.
      expect(
        await loginPage(new UserAgent(async (url, init) => t.fetch(url, withLanguage(init, 'fr'))), {
          ui_locales: 'ja',
        }),
      ).toContain('<h1>Sign in</h1>');
    });

    it('say an error in German to a German browser, with the way back and the request id', async () => {
      const response = await t.fetch(`${t.baseUrl}/nothing-here`, {
        headers: { accept: 'text/html', 'accept-language': 'de' },
      });
      expect(response.status).toBe(404);
      const page = await response.text();
      expect(page).toContain('<h1>Nicht gefunden</h1>');
      expect(page).toContain('Gehen Sie zurück zu der Anwendung');
      expect(page).toContain(`Anfrage-ID: <code>${response.headers.get('x-request-id')}</code>`);
    });

    it('advertise the languages in discovery', async () => {
      const metadata = ProviderMetadata.parse(
        await (await t.fetch(`${t.issuer}/.well-known/openid-configuration`)).json(),
      );
      expect(metadata.ui_locales_supported).toEqual(['en', 'de']);
    });
  },
);

describe('a logo that cannot be shown', () => {
  it.each([
    ['missing.png', 'ENOENT'],
    ['empty.png', 'must hold 1 byte to 256 KiB (it holds 0)'],
  ])('stops the start naming the file: %s', async (name, problem) => {
    const dir = mkdtempSync(join(tmpdir(), 'idgate-logo-'));
    try {
      writeFileSync(join(dir, 'empty.png'), '');
      const [sqlite] = testDatabaseUrls();
      await expect(
        startTestApp(sqlite as Parameters<typeof startTestApp>[0], { ui: { logoFile: join(dir, name) } }),
      ).rejects.toThrow(`ui.logoFile ${join(dir, name)}: ${problem}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function withLanguage(init: RequestInit | undefined, language: string): RequestInit {
  const headers = new Headers(init?.headers);
  headers.set('accept-language', language);
  return { ...init, headers };
}
