// A web application that signs people in with idgate, as any OpenID Connect relying party would
// (openid-client: discovery, authorization code with PKCE), then shows the ID token's claims, the
// access token's claims and the TokenReview a Kubernetes API server would get for the access token.
// Settings come from the environment; `idgate init --demo --app-env FILE` writes them.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import * as oidc from 'openid-client';

const env = (name) => {
  const value = process.env[name];
  if (!value)
    throw new Error(
      `${name} is not set: run \`idgate init --demo --app-env FILE\` and start with \`node --env-file=FILE\``,
    );
  return value;
};
const issuer = new URL(env('IDGATE_ISSUER'));
const appUrl = new URL(env('DEMO_APP_URL'));
const redirectUri = new URL('/callback', appUrl).href;
const reviewKey = env('DEMO_TOKENREVIEW_KEY');
const insecure = issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : undefined;
const config = await oidc.discovery(
  issuer,
  env('DEMO_CLIENT_ID'),
  env('DEMO_CLIENT_SECRET'),
  undefined,
  insecure,
);

/** Sign-ins under way (by state) and signed-in browsers (by session cookie), in memory. */
const pending = new Map();
const sessions = new Map();

const html = (text) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
const json = (value) => `<pre>${html(JSON.stringify(value, null, 2))}</pre>`;
const claimsOf = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());
const cookie = (request, name) =>
  request.headers.cookie
    ?.split(/;\s*/)
    .find((c) => c.startsWith(`${name}=`))
    ?.slice(name.length + 1);

/** What the Kubernetes API server asks idgate for this access token (the webhook contract). */
async function tokenReview(token) {
  const response = await fetch(new URL('/oauth/authenticate', issuer.origin), {
    method: 'POST',
    headers: { authorization: `Bearer ${reviewKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }),
  });
  return (await response.json()).status;
}

function page(response, status, body) {
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  response.end(`<!doctype html><meta charset="utf-8"><title>idgate example</title>
<style>body{font:16px system-ui;max-width:48rem;margin:2rem auto;padding:0 1rem}pre{background:#f4f4f4;padding:1rem;overflow:auto}</style>
<h1>idgate example application</h1>${body}`);
}

async function handle(request, response) {
  const url = new URL(request.url, appUrl);
  if (url.pathname === '/login') {
    const state = oidc.randomState();
    const verifier = oidc.randomPKCECodeVerifier();
    pending.set(state, verifier);
    const target = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid profile email groups',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    response.writeHead(303, { location: target.href }).end();
  } else if (url.pathname === '/callback') {
    const state = url.searchParams.get('state') ?? '';
    const verifier = pending.get(state);
    pending.delete(state);
    if (verifier === undefined)
      return page(response, 400, '<p>Unknown sign-in. <a href="/login">Sign in again</a></p>');
    const tokens = await oidc.authorizationCodeGrant(config, url, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    const id = randomBytes(16).toString('base64url');
    sessions.set(id, {
      idToken: tokens.claims(),
      accessToken: claimsOf(tokens.access_token),
      review: await tokenReview(tokens.access_token),
    });
    response
      .writeHead(303, {
        location: '/',
        'set-cookie': `example_session=${id}; HttpOnly; SameSite=Lax; Path=/`,
      })
      .end();
  } else if (url.pathname === '/') {
    const session = sessions.get(cookie(request, 'example_session') ?? '');
    if (session === undefined)
      return page(response, 200, `<p>Not signed in.</p><p><a href="/login">Sign in with idgate</a></p>`);
    page(
      response,
      200,
      `<p>Signed in as <strong id="user">${html(session.idToken.preferred_username ?? session.idToken.sub)}</strong>.</p>
<h2>ID token claims</h2>${json(session.idToken)}<h2>Access token claims</h2>${json(session.accessToken)}
<h2>TokenReview: what Kubernetes sees</h2><div id="review">${json(session.review)}</div>`,
    );
  } else {
    page(response, 404, '<p>Not found. <a href="/">Home</a></p>');
  }
}

createServer((request, response) =>
  handle(request, response).catch((error) =>
    page(
      response,
      502,
      `<p>Sign-in failed: ${html(String(error.message))}</p><p><a href="/login">Try again</a></p>`,
    ),
  ),
).listen(Number(appUrl.port || 80), appUrl.hostname === 'localhost' ? '127.0.0.1' : appUrl.hostname, () =>
  console.log(`example application on ${appUrl.href}`),
);
