import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { addCluster, listUserGrants } from '@idgate/core/admin';
import { DEVICE_CODE_GRANT_TYPE } from '@idgate/schema';
import { createIdgateClient, createNativeClient, discoverIssuer, type NativeClient } from '@idgate/sdk';
import { decodeJwt } from 'jose';
import { sql } from 'kysely';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer, testClock } from '../helpers/server.js';
import { decideOnDevicePage, signIn, UserAgent } from '../helpers/user-agent.js';

/**
 * Issue 23: a grant reaches the clusters the person approved, and no other. A device sign-in for
 * prod shows "Cluster: prod" on its page; its refresh may ask for prod, never for stage (RFC 8707
 * §2.2), and the page names every cluster the grant will reach (RFC 8628 §5.4). The same for the
 * authorization code flow and its consent page. Over real HTTP, with the SDK's native client and
 * openid-client as the clients, on SQLite and PostgreSQL.
 */

const ERIN = { username: 'erin', password: 'battery-staple-8394c0' };
const PROD = 'kubernetes:prod';
const STAGE = 'kubernetes:stage';

/** A native app's loopback listener (RFC 8252 §7.3), on a port the OS picks. */
async function loopbackListener(): Promise<{ redirectUri: string; close(): Promise<void> }> {
  const server: Server = createServer((_request, response) => response.end('signed in'));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${port}/callback`,
    close: () => new Promise((done) => server.close(() => done())),
  };
}

describe.each(testDatabaseUrls())(
  'RFC 8707: a grant reaches the clusters the person approved, on $name',
  (kind) => {
    let t: TestServer;
    let kubectlId: string;
    let native: NativeClient;
    let config: oidc.Configuration;
    let keys: { prod: string; stage: string };
    const clock = testClock();

    beforeAll(async () => {
      t = await startTestServer(kind, {}, { clock });
      await t.addUser(ERIN.username, ERIN.password, { groups: ['platform'] });
      const { admin } = t.server.context;
      const prod = await addCluster(admin, { name: 'prod' });
      const stage = await addCluster(admin, { name: 'stage' });
      keys = { prod: prod.apiKey, stage: stage.apiKey };
      kubectlId = prod.cluster.kubectlClientId as string;
      native = createNativeClient({
        metadata: await discoverIssuer(t.issuer),
        clientId: kubectlId,
        // the device's wait between polls moves idgate's clock, so nothing sleeps
        now: () => clock.now(),
        sleep: async (ms) => clock.advance(ms),
      });
      config = await oidc.discovery(new URL(t.issuer), kubectlId, undefined, oidc.None(), {
        execute: [oidc.allowInsecureRequests],
      });
    });
    afterAll(async () => t?.close());

    /** A refresh at the token endpoint: the status and the JSON answer. */
    async function refresh(refreshToken: string, resource?: string) {
      const form = new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: kubectlId,
      });
      if (resource !== undefined) form.append('resource', resource);
      const response = await fetch(`${t.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form,
      });
      return { status: response.status, body: (await response.json()) as Record<string, string> };
    }
    const aud = (token: string) => decodeJwt(token).aud;
    const review = async (key: string, token: string) =>
      (await createIdgateClient({ baseUrl: t.baseUrl, apiKey: key }).reviewToken(token)).status.authenticated;

    /** Approves on the device page as erin: answers the confirmation page she read. */
    async function approveOnPage(verificationUri: string, userCode: string): Promise<string> {
      const { confirmation, done } = await decideOnDevicePage(t.issuer, verificationUri, userCode, ERIN);
      expect(done).toContain('You may return to your device');
      return confirmation;
    }

    /** A device sign-in for `resources`, approved on the page: the tokens (for `tokenFor`) and the page. */
    async function deviceSignIn(resources: string[] | undefined, tokenFor?: string) {
      const device = await native.requestDeviceAuthorization({
        scope: 'openid groups offline_access',
        ...(resources === undefined ? {} : { resource: resources }),
      });
      const page = await approveOnPage(device.verification_uri, device.user_code);
      const tokens = await native.pollDeviceAuthorization(
        device,
        tokenFor === undefined ? {} : { resource: tokenFor },
      );
      return { tokens, page, refreshToken: tokens.refresh_token as string };
    }

    describe('the device flow', () => {
      it('a device sign-in for prod cannot be refreshed into a token stage accepts (invalid_target), and keeps working for prod', async () => {
        const { tokens, page, refreshToken } = await deviceSignIn([PROD]);
        expect(page).toContain('Cluster: <strong>prod</strong>');
        expect(page).not.toContain('stage');
        expect(aud(tokens.access_token)).toBe(PROD);

        const widened = await refresh(refreshToken, STAGE);
        expect(widened).toEqual({
          status: 400,
          body: {
            error: 'invalid_target',
            error_description: `resource not approved for this grant: ${STAGE} (it covers ${PROD}); sign in again to ask for it`,
          },
        });
        // The refusal did not spend the refresh token, and the grant still serves prod.
        const again = await refresh(refreshToken, PROD);
        expect(again.status).toBe(200);
        expect(aud(again.body.access_token as string)).toBe(PROD);
        const plain = await refresh(again.body.refresh_token as string);
        expect(aud(plain.body.access_token as string)).toBe(PROD);
        expect(await review(keys.prod, plain.body.access_token as string)).toBe(true);
        expect(await review(keys.stage, plain.body.access_token as string)).toBe(false);

        // The administrator sees what the grant covers.
        const grants = await listUserGrants(t.server.context.admin, ERIN.username);
        const grant = grants.items.find((g) => g.id === decodeJwt(tokens.access_token).sid);
        expect(grant?.resources).toEqual([PROD]);
      });

      it('a device sign-in for prod and stage names both on the page and serves both, one token per cluster', async () => {
        const { tokens, page, refreshToken } = await deviceSignIn([PROD, STAGE], PROD);
        expect(page).toContain('Cluster: <strong>prod</strong>');
        expect(page).toContain('Cluster: <strong>stage</strong>');
        expect(aud(tokens.access_token)).toBe(PROD);
        expect(await review(keys.stage, tokens.access_token)).toBe(false);

        const forStage = await refresh(refreshToken, STAGE);
        expect(forStage.status).toBe(200);
        expect(aud(forStage.body.access_token as string)).toBe(STAGE);
        expect(await review(keys.stage, forStage.body.access_token as string)).toBe(true);
        // Without resource: everything the sign-in approved.
        const both = await refresh(forStage.body.refresh_token as string);
        expect(aud(both.body.access_token as string)).toEqual([PROD, STAGE]);
      });

      it('a device sign-in that names no cluster covers the clusters its page named, not one added while the person decided', async () => {
        const device = await native.requestDeviceAuthorization({ scope: 'openid offline_access' });
        await addCluster(t.server.context.admin, { name: 'dev' });
        const page = await approveOnPage(device.verification_uri, device.user_code);
        expect(page).toContain('Cluster: <strong>prod</strong>');
        expect(page).toContain('Cluster: <strong>stage</strong>');
        expect(page).not.toContain('<strong>dev</strong>');
        const tokens = await native.pollDeviceAuthorization(device);
        expect(aud(tokens.access_token)).toEqual([PROD, STAGE]);
        const refused = await refresh(tokens.refresh_token as string, 'kubernetes:dev');
        expect([refused.status, refused.body.error]).toEqual([400, 'invalid_target']);
      });

      it('names an audience that is no registered cluster as such', async () => {
        const client = await t.addClient({
          name: 'deploy-bot',
          public: true,
          grants: [DEVICE_CODE_GRANT_TYPE, 'refresh_token'],
          scopes: ['openid', 'offline_access'],
          audiences: [PROD, 'https://api.example.test'],
        });
        const bot = createNativeClient({
          metadata: await discoverIssuer(t.issuer),
          clientId: client.clientId,
          now: () => clock.now(),
          sleep: async (ms) => clock.advance(ms),
        });
        const device = await bot.requestDeviceAuthorization({ scope: 'openid' });
        const page = await approveOnPage(device.verification_uri, device.user_code);
        expect(page).toContain('Cluster: <strong>prod</strong>');
        expect(page).toContain('Audience: <strong>https://api.example.test</strong>');
      });
    });

    describe('the authorization code flow', () => {
      async function codeSignIn(resources: string[], options: { tokenFor?: string; username?: string } = {}) {
        const listener = await loopbackListener();
        try {
          const codeVerifier = oidc.randomPKCECodeVerifier();
          const state = oidc.randomState();
          const url = oidc.buildAuthorizationUrl(
            config,
            new URLSearchParams([
              ['redirect_uri', listener.redirectUri],
              ['scope', 'openid groups offline_access'],
              ['code_challenge', await oidc.calculatePKCECodeChallenge(codeVerifier)],
              ['code_challenge_method', 'S256'],
              ['state', state],
              ...resources.map((resource): [string, string] => ['resource', resource]),
            ]),
          );
          const result = await signIn(new UserAgent(), url, {
            redirectPrefix: listener.redirectUri,
            username: options.username ?? ERIN.username,
            password: ERIN.password,
          });
          const tokens = await oidc.authorizationCodeGrant(
            config,
            result.callback,
            { pkceCodeVerifier: codeVerifier, expectedState: state },
            options.tokenFor === undefined ? undefined : { resource: options.tokenFor },
          );
          return { tokens, consentPage: result.consentPage };
        } finally {
          await listener.close();
        }
      }

      it('a sign-in for prod names prod on the consent page, and cannot be refreshed into a token for stage', async () => {
        const { tokens, consentPage } = await codeSignIn([PROD]);
        expect(consentPage).toContain('Cluster: <strong>prod</strong>');
        expect(consentPage).not.toContain('stage');
        expect(aud(tokens.access_token)).toBe(PROD);
        const error = await oidc
          .refreshTokenGrant(config, tokens.refresh_token as string, { resource: STAGE })
          .catch((e: unknown) => e);
        expect(error).toMatchObject({
          error: 'invalid_target',
          error_description: `resource not approved for this grant: ${STAGE} (it covers ${PROD}); sign in again to ask for it`,
        });
        const again = await oidc.refreshTokenGrant(config, tokens.refresh_token as string, {
          resource: PROD,
        });
        expect(aud(again.access_token)).toBe(PROD);
      });

      it('a sign-in for both asks consent again for stage, names both, and serves both', async () => {
        const { tokens, consentPage } = await codeSignIn([PROD, STAGE], { tokenFor: PROD });
        // Consent to prod was remembered; stage is new, so the page is shown again, naming both.
        expect(consentPage).toContain('Cluster: <strong>prod</strong>');
        expect(consentPage).toContain('Cluster: <strong>stage</strong>');
        expect(aud(tokens.access_token)).toBe(PROD);
        const forStage = await oidc.refreshTokenGrant(config, tokens.refresh_token as string, {
          resource: STAGE,
        });
        expect(aud(forStage.access_token)).toBe(STAGE);
        expect(await review(keys.stage, forStage.access_token)).toBe(true);

        // Both consented to now: no page.
        const quiet = await codeSignIn([STAGE]);
        expect(quiet.consentPage).toBeUndefined();
        expect(aud(quiet.tokens.access_token)).toBe(STAGE);
      });

      it('a token request cannot ask the code for a cluster the authorization request did not name', async () => {
        const error = await codeSignIn([PROD], { tokenFor: STAGE }).catch((e: unknown) => e);
        expect(error).toMatchObject({
          error: 'invalid_target',
          error_description: `resource was not part of the authorization request: ${STAGE}`,
        });
      });
    });

    describe('grants opened before idgate recorded their resources', () => {
      it('are refreshed without resource, for the client’s audiences as before; resource is invalid_target', async () => {
        const { tokens, refreshToken } = await deviceSignIn([PROD]);
        const grantId = decodeJwt(tokens.access_token).sid as string;
        // As migration 0019 leaves a grant opened before it.
        await sql`update grants set resources = null where id = ${grantId}`.execute(
          t.server.services.database.db,
        );
        const named = await refresh(refreshToken, PROD);
        expect(named.status).toBe(400);
        expect(named.body).toMatchObject({ error: 'invalid_target' });
        expect(named.body.error_description).toContain('sign in again to ask for kubernetes:prod');
        const plain = await refresh(refreshToken);
        expect(plain.status).toBe(200);
        expect([...(aud(plain.body.access_token as string) as string[])].sort()).toEqual([
          'kubernetes:dev',
          PROD,
          STAGE,
        ]);
      });
    });
  },
);
