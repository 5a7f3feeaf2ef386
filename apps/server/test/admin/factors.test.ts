import { DEVICE_CODE_GRANT_TYPE } from '@idgate/schema';
import { createIdgateAdminClient, type IdgateAdminClient, IdgateHttpError } from '@idgate/sdk';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testClock } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { decideOnDevicePage, signIn, UserAgent } from '../helpers/user-agent.js';

const REDIRECT = 'https://rp.example.test/callback';
const PASSWORD = 'battery-staple-7c1e22';
const shownSecret = (page: string) =>
  (/<code id="totp-secret">([^<]+)<\/code>/.exec(page)?.[1] ?? '').replaceAll(' ', '');

describe.each(testDatabaseUrls())(
  'second factors over the admin API and the device flow on $name',
  (kind) => {
    let t: TestServer;
    let admin: IdgateAdminClient;
    const clock = testClock();
    let web: { clientId: string; clientSecret: string };
    let web_config: oidc.Configuration;
    let kubectl: oidc.Configuration;
    const code = (secret: string) => generateSync({ secret, epoch: Math.floor(clock.now() / 1000) });

    beforeAll(async () => {
      t = await startTestServer(kind, { device: { interval: 1 } }, { clock });
      for (const name of ['ines', 'jon', 'kai']) await t.addUser(name, PASSWORD);
      admin = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: await t.addApiKey(['admin']) });
      web = await t.addClient({
        name: 'Web',
        grants: ['authorization_code'],
        trusted: true,
        scopes: ['openid'],
        redirectUris: [REDIRECT],
      });
      web_config = await oidc.discovery(new URL(t.issuer), web.clientId, web.clientSecret, undefined, {
        execute: [oidc.allowInsecureRequests],
      });
      const device = await t.addClient({
        name: 'kubectl',
        public: true,
        grants: [DEVICE_CODE_GRANT_TYPE],
        scopes: ['openid'],
      });
      kubectl = await oidc.discovery(new URL(t.issuer), device.clientId, undefined, oidc.None(), {
        execute: [oidc.allowInsecureRequests],
      });
    });
    afterAll(async () => t?.close());

    async function webSignIn(username: string, secondFactor?: (page: string) => string) {
      const verifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(web_config, {
        redirect_uri: REDIRECT,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
      const { callback } = await signIn(new UserAgent(), url, {
        redirectPrefix: REDIRECT,
        username,
        password: PASSWORD,
        ...(secondFactor === undefined ? {} : { secondFactor }),
      });
      return oidc.authorizationCodeGrant(web_config, callback, { pkceCodeVerifier: verifier });
    }

    it('makes a user it requires MFA of enrol at the next sign-in, lists the factor without its secret, and resets it', async () => {
      expect(await admin.setMfaRequirement('ines', true)).toMatchObject({
        username: 'ines',
        mfaRequired: true,
        factors: [],
      });
      let secret = '';
      const tokens = await webSignIn('ines', (page) => {
        secret = shownSecret(page);
        return code(secret);
      });
      expect(tokens.claims()).toMatchObject({ acr: 'urn:idgate:acr:mfa', amr: ['pwd', 'otp', 'mfa'] });
      const listed = await admin.listUserFactors('ines');
      expect(listed).toMatchObject({ mfaRequired: true, recoveryCodesLeft: 10 });
      expect(listed.factors).toEqual([
        {
          id: expect.any(String),
          kind: 'totp',
          name: 'authenticator',
          createdAt: expect.any(String),
          lastUsedAt: expect.any(String),
        },
      ]);
      expect(JSON.stringify(listed)).not.toContain(secret);

      // Lost every factor: the reset removes them and the codes; MFA still required, so she enrols again.
      expect(await admin.resetUserFactors('ines')).toEqual({ removed: 1 });
      expect(await admin.listUserFactors('ines')).toMatchObject({ recoveryCodesLeft: 0, factors: [] });
      clock.advance(30_000);
      let enrolledAgain = false;
      await webSignIn('ines', (page) => {
        enrolledAgain = page.includes('totp-secret');
        return code(shownSecret(page));
      });
      expect(enrolledAgain).toBe(true);
      const events = await admin.listEvents({
        user: 'ines',
        type: ['mfa.required', 'factor.enrolled', 'factor.removed'],
      });
      expect(events.items.map((e) => e.type).sort()).toEqual([
        'factor.enrolled',
        'factor.enrolled',
        'factor.removed',
        'mfa.required',
      ]);
    });

    it('removes one factor by id, and answers 404 factor_not_found for one the user does not have', async () => {
      await admin.setMfaRequirement('jon', true);
      await webSignIn('jon', (page) => code(shownSecret(page)));
      await admin.setMfaRequirement('jon', false);
      const [factor] = (await admin.listUserFactors('jon')).factors;
      await expect(admin.removeUserFactor('ines', factor?.id as string)).rejects.toMatchObject({
        status: 404,
        problem: { code: 'factor_not_found' },
      });
      await admin.removeUserFactor('jon', factor?.id as string);
      expect((await admin.listUserFactors('jon')).factors).toEqual([]);
      // No factor, none required: the password alone signs in again.
      const tokens = await webSignIn('jon');
      expect(tokens.claims()).toMatchObject({ acr: 'urn:idgate:acr:sf', amr: ['pwd'] });
      const missing = await admin.listUserFactors('nobody').catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(IdgateHttpError);
      expect(missing).toMatchObject({ status: 404, problem: { code: 'user_not_found' } });
    });

    it('asks for the second factor on the device verification page, and the device tokens say so', async () => {
      await admin.setMfaRequirement('kai', true);
      let secret = '';
      await webSignIn('kai', (page) => {
        secret = shownSecret(page);
        return code(secret);
      });
      clock.advance(30_000);
      const device = await oidc.initiateDeviceAuthorization(kubectl, { scope: 'openid' });
      const polling = oidc.pollDeviceAuthorizationGrant(kubectl, device);
      let asked = false;
      const { done } = await decideOnDevicePage(
        t.issuer,
        device.verification_uri,
        device.user_code,
        { username: 'kai', password: PASSWORD },
        'allow',
        () => {
          asked = true;
          return code(secret);
        },
      );
      expect(asked).toBe(true);
      expect(done).toContain('You may return to your device');
      const tokens = await polling;
      expect(tokens.claims()).toMatchObject({ acr: 'urn:idgate:acr:mfa', amr: ['pwd', 'otp', 'mfa'] });
      expect(decodeJwt(tokens.access_token)).toMatchObject({ acr: 'urn:idgate:acr:mfa' });
    });

    it('lists a passkey as kind webauthn without its key or credential id, and removes it', async () => {
      const kai = (await t.server.services.storage.users.findByUsername('kai'))?.id as string;
      const at = new Date(clock.now());
      await t.server.services.storage.factors.create({
        id: 'pk-kai',
        userId: kai,
        kind: 'webauthn',
        name: 'yubikey',
        sealedSecret: 'pQECAyYgASFYIKEY',
        lastUsedStep: 0,
        credentialId: 'cred-kai',
        transports: ['usb'],
        createdAt: at,
        confirmedAt: at,
        lastUsedAt: null,
      });
      const listed = await admin.listUserFactors('kai');
      expect(listed.factors).toContainEqual({
        id: 'pk-kai',
        kind: 'webauthn',
        name: 'yubikey',
        createdAt: at.toISOString(),
        lastUsedAt: null,
      });
      expect(JSON.stringify(listed)).not.toMatch(/cred-kai|pQECAyYgASFYIKEY|usb/);
      await admin.removeUserFactor('kai', 'pk-kai');
      expect((await admin.listUserFactors('kai')).factors.map((f) => f.kind)).not.toContain('webauthn');
      expect(await t.server.services.storage.factors.findByCredentialId('cred-kai')).toBeUndefined();
    });
  },
);
