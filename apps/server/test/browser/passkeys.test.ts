import type { AuditEvent } from '@idgate/schema';
import { DEVICE_CODE_GRANT_TYPE, DeviceAuthorizationResponse } from '@idgate/schema';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, startRelyingParty } from '../helpers/browser.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer, testClock } from '../helpers/server.js';
import { toolPath } from '../helpers/tools.js';

const CHROMIUM = toolPath('chromium');
const PASSWORD = 'battery-staple-a81d07';

// One Chromium, one idgate on `localhost` (WebAuthn refuses IP literals; SQLite, as the other
// browser tests: PostgreSQL runs the same use cases in test/factors/webauthn.test.ts) and one page
// with a CDP virtual authenticator (a platform passkey: CTAP2, internal,
// resident keys, user verification), which answers WebAuthn ceremonies without a person.
describe.skipIf(CHROMIUM === undefined)('passkeys in a real browser (Chromium)', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  describe.each(testDatabaseUrls().slice(0, 1))('on $name', (kind) => {
    let t: TestServer;
    let relyingParty: Awaited<ReturnType<typeof startRelyingParty>>;
    let config: oidc.Configuration;
    let kubectl: { clientId: string };
    let context: BrowserContext;
    let page: Page;
    let cdp: CDPSession;
    let authenticatorId: string;
    let userId: string;
    const clock = testClock();

    beforeAll(async () => {
      t = await startTestServer(kind, {}, { clock, hostname: 'localhost' });
      userId = await t.addUser('pia', PASSWORD);
      relyingParty = await startRelyingParty('Back at the application');
      const client = await t.addClient({
        name: 'Ops Console',
        grants: ['authorization_code'],
        trusted: true,
        scopes: ['openid'],
        redirectUris: [relyingParty.callback],
      });
      kubectl = await t.addClient({
        name: 'kubectl',
        public: true,
        grants: [DEVICE_CODE_GRANT_TYPE],
        scopes: ['openid'],
      });
      config = await oidc.discovery(new URL(t.issuer), client.clientId, client.clientSecret, undefined, {
        execute: [oidc.allowInsecureRequests],
      });
      context = await browser.newContext();
      page = await context.newPage();
      page.setDefaultTimeout(5000);
      cdp = await context.newCDPSession(page);
      await cdp.send('WebAuthn.enable');
      ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      }));
    });
    afterAll(async () => {
      await context?.close();
      await relyingParty?.close();
      await t?.close();
    });

    const userVerified = (isUserVerified: boolean) =>
      cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified });
    const used = async () =>
      (await t.server.services.storage.auditEvents.list({ limit: 100, types: ['factor.used'] })).length;
    const failures = async () =>
      (await t.server.services.storage.auditEvents.list({ limit: 100, types: ['factor.failed'] })).map(
        (e: AuditEvent) => e.details as { reason: string; kind?: string },
      );

    /** A real openid-client code flow with PKCE, the browser signing in with `signIn`; the ID token's claims. */
    async function codeFlow(signIn: () => Promise<void>) {
      await context.clearCookies();
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: relyingParty.callback,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
      });
      await page.goto(url.toString());
      await signIn();
      await page.getByRole('heading', { name: 'Back at the application' }).waitFor();
      const tokens = await oidc.authorizationCodeGrant(config, new URL(page.url()), {
        pkceCodeVerifier: verifier,
        expectedState: state,
      });
      return tokens.claims();
    }

    const presence = (enabled: boolean) =>
      cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled });
    // The login page asks for a passkey through the username field's autofill (conditional
    // mediation) as it loads; the virtual authenticator, simulating the user's presence, picks
    // its passkey there at once, as a person choosing it from the autofill list would.
    const passkeyAlone = async () => {};

    it('registers a passkey on the account page, then signs in with it alone as MFA', async () => {
      await page.goto(`${t.issuer}/login`);
      await page.getByLabel('Username').fill('pia');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Signed in' }).waitFor();

      await page.goto(`${t.issuer}/account`);
      await page.locator('#passkey-name').fill('laptop');
      await page.getByRole('button', { name: 'Add a passkey or security key' }).click();
      // The first factor comes with recovery codes.
      await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
      await page.getByRole('link', { name: 'Continue' }).click();
      const listed = page.locator('.factors li');
      expect(await listed.count()).toBe(1);
      expect(await listed.first().textContent()).toMatch(/laptop \(passkey\) added \d{4}-\d{2}-\d{2}/);
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      expect(credentials).toHaveLength(1);
      expect(credentials[0]?.isResidentCredential).toBe(true);
      const stored = await t.server.services.storage.factors.list(userId);
      expect(stored).toMatchObject([{ kind: 'webauthn', name: 'laptop', transports: ['internal'] }]);

      clock.advance(60_000);
      const claims = await codeFlow(passkeyAlone);
      expect(claims).toMatchObject({ sub: userId, acr: 'urn:idgate:acr:mfa', amr: ['hwk', 'user', 'mfa'] });
    });

    it('takes the passkey as the second factor after a password', async () => {
      clock.advance(60_000);
      // No one picks the passkey from the autofill: the password it is.
      await presence(false);
      const claims = await codeFlow(async () => {
        // The username field offers passkeys in the browser's autofill.
        expect(await page.getByLabel('Username').getAttribute('autocomplete')).toBe('username webauthn');
        await page.getByLabel('Username').fill('pia');
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
        await presence(true);
        await page.getByRole('button', { name: 'Use a passkey or security key' }).click();
      });
      expect(claims).toMatchObject({ sub: userId, acr: 'urn:idgate:acr:mfa', amr: ['pwd', 'hwk', 'mfa'] });
    });

    it("signs in with the passkey alone on the device flow's verification page", async () => {
      await context.clearCookies();
      const form = (body: Record<string, string>) => ({ method: 'POST', body: new URLSearchParams(body) });
      const device = DeviceAuthorizationResponse.parse(
        await (
          await fetch(
            `${t.issuer}/device_authorization`,
            form({ client_id: kubectl.clientId, scope: 'openid' }),
          )
        ).json(),
      );
      await page.goto(device.verification_uri_complete as string);
      await page.getByRole('button', { name: 'Continue' }).click();
      // The login page's passkey autofill signs in; the device confirmation follows.
      await page.getByRole('heading', { name: 'Allow kubectl on your device?' }).waitFor();
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('heading', { name: 'Device connected' }).waitFor();
      const tokens = (await (
        await fetch(
          `${t.issuer}/token`,
          form({
            grant_type: DEVICE_CODE_GRANT_TYPE,
            device_code: device.device_code,
            client_id: kubectl.clientId,
          }),
        )
      ).json()) as { id_token: string };
      expect(decodeJwt(tokens.id_token)).toMatchObject({
        acr: 'urn:idgate:acr:mfa',
        amr: ['hwk', 'user', 'mfa'],
      });
    });

    it('refuses a passkey alone when the authenticator did not verify the user', async () => {
      // Chromium itself refuses a discoverable credential whose user verification failed (the
      // server's own refusal of an assertion without the UV flag is covered in
      // test/factors/webauthn.test.ts): the page says the passkey was not used, no one signs in.
      await context.clearCookies();
      const before = await used();
      await userVerified(false);
      try {
        await page.goto(`${t.issuer}/login`);
        await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
        await page.getByRole('alert').waitFor();
        expect(await page.getByRole('alert').textContent()).toBe(
          'The passkey was not used: the browser cancelled or has none for this site.',
        );
        expect(page.url()).toBe(`${t.issuer}/login`);
        expect(await used()).toBe(before);
      } finally {
        await userVerified(true);
      }
    });

    it('refuses a passkey after it was removed on the account page', async () => {
      await context.clearCookies();
      await page.goto(`${t.issuer}/login`);
      await page.getByRole('heading', { name: 'Signed in' }).waitFor();
      await page.goto(`${t.issuer}/account`);
      await page.getByRole('button', { name: 'Remove laptop' }).click();
      await page.getByText('You have no second factor yet.').waitFor();

      await context.clearCookies();
      await page.goto(`${t.issuer}/login`);
      await page.getByRole('alert').waitFor();
      expect(await page.getByRole('alert').textContent()).toBe(
        'This passkey is not registered here (it may have been removed).',
      );
      expect(await failures()).toContainEqual(
        expect.objectContaining({ kind: 'webauthn', reason: 'unknown_credential' }),
      );
    });
  });
});
