import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { signIn, UserAgent } from '../helpers/user-agent.js';

const REDIRECT = 'http://127.0.0.1:9/cli-callback';
const insecure = { [oauth.allowInsecureRequests]: true } as const;

describe.each(testDatabaseUrls())('oauth4webapi as a public client (PKCE, no secret) on $name', (kind) => {
  let t: TestServer;
  let as: oauth.AuthorizationServer;
  let client: oauth.Client;
  let userId: string;

  beforeAll(async () => {
    t = await startTestServer(kind);
    userId = await t.addUser('erin', 'battery-staple-8394c0', { groups: ['dev'] });
    const { clientId } = await t.addClient({
      name: 'kubectl plugin',
      public: true,
      grants: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'groups', 'offline_access'],
      redirectUris: [REDIRECT],
    });
    client = { client_id: clientId };
    const issuer = new URL(t.issuer);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure }),
    );
  });
  afterAll(async () => t?.close());

  async function codeFlow() {
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const url = new URL(as.authorization_endpoint as string);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid groups offline_access',
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    }).toString();
    const { callback } = await signIn(new UserAgent(), url, {
      redirectPrefix: REDIRECT,
      username: 'erin',
      password: 'battery-staple-8394c0',
    });
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      params,
      REDIRECT,
      codeVerifier,
      insecure,
    );
    return oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: nonce,
      requireIdToken: true,
    });
  }

  it('signs in, reads userinfo, rotates the refresh token and revokes it', async () => {
    const tokens = await codeFlow();
    const claims = oauth.getValidatedIdTokenClaims(tokens);
    expect(claims?.sub).toBe(userId);

    const info = await oauth.processUserInfoResponse(
      as,
      client,
      userId,
      await oauth.userInfoRequest(as, client, tokens.access_token, insecure),
    );
    expect(info).toMatchObject({ sub: userId, groups: ['dev'] });

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(
        as,
        client,
        oauth.None(),
        tokens.refresh_token as string,
        insecure,
      ),
    );
    expect(refreshed.refresh_token).toEqual(expect.any(String));
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);

    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, oauth.None(), refreshed.refresh_token as string, insecure),
    );
    const after = await oauth.refreshTokenGrantRequest(
      as,
      client,
      oauth.None(),
      refreshed.refresh_token as string,
      insecure,
    );
    await expect(oauth.processRefreshTokenResponse(as, client, after)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });

  it('cannot introspect: a public client proves nothing', async () => {
    const tokens = await codeFlow();
    const response = await oauth.introspectionRequest(
      as,
      client,
      oauth.None(),
      tokens.access_token,
      insecure,
    );
    expect(response.status).toBe(401);
  });
});
