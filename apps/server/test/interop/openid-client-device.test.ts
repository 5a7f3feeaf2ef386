import { DEVICE_CODE_GRANT_TYPE } from '@idgate/schema';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer, testClock } from '../helpers/server.js';
import { decideOnDevicePage } from '../helpers/user-agent.js';

const ERIN = { username: 'erin', password: 'battery-staple-8394c0' };

describe.each(testDatabaseUrls())(
  'openid-client runs the RFC 8628 device flow against idgate on $name',
  (kind) => {
    let t: TestServer;
    let config: oidc.Configuration;
    let userId: string;
    const clock = testClock();

    beforeAll(async () => {
      t = await startTestServer(kind, { device: { interval: 1 } }, { clock });
      userId = await t.addUser(ERIN.username, ERIN.password, { groups: ['platform'] });
      const client = await t.addClient({
        name: 'kubectl',
        public: true,
        grants: [DEVICE_CODE_GRANT_TYPE, 'refresh_token'],
        scopes: ['openid', 'groups', 'offline_access'],
        audiences: ['cluster-a'],
      });
      config = await oidc.discovery(new URL(t.issuer), client.clientId, undefined, oidc.None(), {
        execute: [oidc.allowInsecureRequests],
      });
    });
    afterAll(async () => t?.close());

    it('initiates, polls while the person approves on the page, gets tokens and refreshes them', async () => {
      const device = await oidc.initiateDeviceAuthorization(config, {
        scope: 'openid groups offline_access',
        resource: 'cluster-a',
      });
      expect(device.verification_uri).toBe(`${t.issuer}/device`);
      const polling = oidc.pollDeviceAuthorizationGrant(config, device);
      const { done } = await decideOnDevicePage(t.issuer, device.verification_uri, device.user_code, ERIN);
      expect(done).toContain('You may return to your device');
      const tokens = await polling;
      expect(tokens.claims()).toMatchObject({ sub: userId, iss: t.issuer });
      expect(tokens.refresh_token).toEqual(expect.any(String));
      expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: userId, aud: 'cluster-a' });
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
      expect(refreshed.access_token).not.toBe(tokens.access_token);
    });

    it('surfaces a denial as access_denied', async () => {
      const device = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
      const polling = oidc.pollDeviceAuthorizationGrant(config, device).then(
        () => undefined,
        (error: unknown) => error,
      );
      await decideOnDevicePage(t.issuer, device.verification_uri, device.user_code, ERIN, 'deny');
      expect(await polling).toMatchObject({ error: 'access_denied' });
    });

    it('surfaces an expired code as expired_token', async () => {
      const device = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
      clock.advance(device.expires_in * 1000);
      await expect(oidc.pollDeviceAuthorizationGrant(config, device)).rejects.toMatchObject({
        error: 'expired_token',
      });
    });
  },
);
