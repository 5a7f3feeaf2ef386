import * as oidc from 'openid-client';
import type { TestApp } from '../helpers/app.js';
import { signIn, UserAgent } from '../helpers/user-agent.js';

export const REDIRECT = 'https://rp.example.test/cb';
export const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) TestBrowser/1.0';

/** A web application registered for the code flow with refresh tokens, as openid-client sees it. */
export async function webApplication(t: TestApp, name: string) {
  const client = await t.addClient({
    name,
    trusted: true,
    grants: ['authorization_code', 'refresh_token'],
    scopes: ['openid', 'offline_access'],
    redirectUris: [REDIRECT],
  });
  const config = await oidc.discovery(new URL(t.issuer), client.clientId, client.clientSecret, undefined, {
    execute: [oidc.allowInsecureRequests],
    [oidc.customFetch]: (url, options) => t.fetch(url, options as RequestInit),
  });
  return { ...client, config };
}

/** A trusted client of the password grant with refresh tokens: a CLI signing people in. */
export function passwordGrantClient(t: TestApp, name = 'CLI') {
  return t.addClient({
    name,
    trusted: true,
    grants: ['password', 'refresh_token'],
    scopes: ['openid', 'offline_access'],
  });
}

/** A browser (its own cookie jar and user agent) that talks to the test app. */
export function browser(t: TestApp): UserAgent {
  return new UserAgent((input, init) =>
    t.fetch(input, {
      ...init,
      headers: { ...(init?.headers as Record<string, string>), 'user-agent': BROWSER },
    }),
  );
}

/**
 * Signs `agent` in to `app` as a person would (authorize, login form, callback) and exchanges
 * the code: a browser session and a grant with a refresh token.
 */
export async function signInTo(
  app: { config: oidc.Configuration },
  agent: UserAgent,
  credentials: { username: string; password: string },
) {
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(app.config, {
    redirect_uri: REDIRECT,
    scope: 'openid offline_access',
    state: 's',
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
  });
  const { callback, sawLogin } = await signIn(agent, url, { redirectPrefix: REDIRECT, ...credentials });
  const tokens = await oidc.authorizationCodeGrant(app.config, callback, {
    pkceCodeVerifier: codeVerifier,
    expectedState: 's',
  });
  return { tokens, sawLogin };
}
