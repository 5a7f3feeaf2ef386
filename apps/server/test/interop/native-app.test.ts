import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { addCluster } from '@idgate/core/admin';
import { createIdgateClient } from '@idgate/sdk';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { signIn, UserAgent } from '../helpers/user-agent.js';

/**
 * A native app's loopback listener (RFC 8252 §7.3): a port the OS picks, answering the one
 * redirect it waits for with the URL it was called at.
 */
async function loopbackListener(): Promise<{
  redirectUri: string;
  received: Promise<URL>;
  close(): Promise<void>;
}> {
  let resolve: (url: URL) => void = () => {};
  const received = new Promise<URL>((r) => {
    resolve = r;
  });
  const server: Server = createServer((request, response) => {
    const { port } = server.address() as AddressInfo;
    resolve(new URL(request.url ?? '/', `http://127.0.0.1:${port}`));
    response.end('signed in; you may close this window');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${port}/callback`,
    received,
    close: () => new Promise((done) => server.close(() => done())),
  };
}

describe.each(testDatabaseUrls())('openid-client as a native app (kubectl’s client) on $name', (kind) => {
  let t: TestServer;
  let config: oidc.Configuration;
  let clusterKeys: { a: string; b: string };

  beforeAll(async () => {
    t = await startTestServer(kind);
    await t.addUser('erin', 'battery-staple-8394c0', { groups: ['platform'], email: 'erin@example.test' });
    const { admin } = t.server.context;
    const a = await addCluster(admin, { name: 'a' });
    const b = await addCluster(admin, { name: 'b' });
    clusterKeys = { a: a.apiKey, b: b.apiKey };
    const clientId = a.cluster.kubectlClientId as string;
    config = await oidc.discovery(new URL(t.issuer), clientId, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests],
    });
  });
  afterAll(async () => t?.close());

  async function signInAt(
    listener: Awaited<ReturnType<typeof loopbackListener>>,
    resource?: string | string[],
  ) {
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const parameters = new URLSearchParams({
      redirect_uri: listener.redirectUri,
      scope: 'openid profile groups offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
    });
    // RFC 8707 §2: one resource parameter per audience
    for (const value of resource === undefined ? [] : [resource].flat()) parameters.append('resource', value);
    const url = oidc.buildAuthorizationUrl(config, parameters);
    const agent = new UserAgent();
    const { callback } = await signIn(agent, url, {
      redirectPrefix: listener.redirectUri,
      username: 'erin',
      password: 'battery-staple-8394c0',
    });
    // The browser follows the redirect to the app's listener, which gets the code.
    await agent.request(callback);
    return { callback: await listener.received, codeVerifier, state };
  }

  it('signs in through a loopback redirect at a random port for two clusters, and refreshes for the other one', async () => {
    const listener = await loopbackListener();
    try {
      const { callback, codeVerifier, state } = await signInAt(listener, ['kubernetes:a', 'kubernetes:b']);
      expect(callback.searchParams.get('iss')).toBe(t.issuer);
      const tokens = await oidc.authorizationCodeGrant(
        config,
        callback,
        { pkceCodeVerifier: codeVerifier, expectedState: state },
        { resource: 'kubernetes:a' },
      );
      const forA = decodeJwt(tokens.access_token);
      expect(forA).toMatchObject({ aud: 'kubernetes:a', preferred_username: 'erin', groups: ['platform'] });
      // The email scope was not asked for: no email in the token.
      expect(forA).not.toHaveProperty('email');

      // One sign-in, every cluster it named: the refresh grant with resource=B gives a token for B.
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string, {
        resource: 'kubernetes:b',
      });
      expect(decodeJwt(refreshed.access_token).aud).toBe('kubernetes:b');
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);

      const reviewer = (key: string) => createIdgateClient({ baseUrl: t.baseUrl, apiKey: key });
      expect((await reviewer(clusterKeys.a).reviewToken(tokens.access_token)).status).toMatchObject({
        authenticated: true,
        audiences: ['kubernetes:a'],
        user: { username: 'erin' },
      });
      expect((await reviewer(clusterKeys.b).reviewToken(tokens.access_token)).status).toEqual({
        authenticated: false,
        error: 'token is not for this cluster',
      });
      expect((await reviewer(clusterKeys.b).reviewToken(refreshed.access_token)).status.authenticated).toBe(
        true,
      );
    } finally {
      await listener.close();
    }
  });

  it('takes resource at the token endpoint when the authorization request named none', async () => {
    const listener = await loopbackListener();
    try {
      const { callback, codeVerifier, state } = await signInAt(listener);
      const tokens = await oidc.authorizationCodeGrant(
        config,
        callback,
        { pkceCodeVerifier: codeVerifier, expectedState: state },
        { resource: 'kubernetes:b' },
      );
      expect(decodeJwt(tokens.access_token).aud).toBe('kubernetes:b');
    } finally {
      await listener.close();
    }
  });

  it('refuses a redirect to another path on the loopback host, and a cluster the client cannot ask for', async () => {
    const listener = await loopbackListener();
    try {
      const wrongPath = oidc.buildAuthorizationUrl(config, {
        redirect_uri: listener.redirectUri.replace('/callback', '/other'),
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      });
      const page = await fetch(wrongPath, { redirect: 'manual' });
      expect(page.status).toBe(400);
      expect(await page.text()).toContain('redirect_uri is not registered for this client');

      const unknown = oidc.buildAuthorizationUrl(config, {
        redirect_uri: listener.redirectUri,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
        resource: 'kubernetes:elsewhere',
      });
      const back = await fetch(unknown, { redirect: 'manual' });
      expect(back.status).toBe(303);
      const location = new URL(back.headers.get('location') as string);
      expect(location.origin + location.pathname).toBe(listener.redirectUri);
      expect(location.searchParams.get('error')).toBe('invalid_target');
    } finally {
      await listener.close();
    }
  });
});
