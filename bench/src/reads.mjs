// The read paths and the token endpoint's client_credentials grant, on idgate and the references.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { subjectTokens } from './idgate.mjs';

export const REVIEW = [
  '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"',
  '"}}',
];
export const reviewBody = (/** @type {string} */ token) => REVIEW[0] + token + REVIEW[1];
const REVIEW_TEMPLATE = reviewBody('{1}');

const VALID = { status: 200, bodyIncludes: '"authenticated":true' };
const INVALID = { status: 200, bodyIncludes: '"authenticated":false' };
const ACTIVE = { status: 200, bodyIncludes: '"active":true' };
const ISSUED = { status: 200, bodyIncludes: '"access_token"' };
const FORM = 'application/x-www-form-urlencoded';

/**
 * @typedef {{ apiKey: string, userToken: string, serviceToken: string,
 *   auth: { service: string, expiring: string }, oidc: { auth: string, token: string },
 *   oidcJwt: { auth: string }, ciKeys: Record<'RS256' | 'ES256', import('node:crypto').KeyObject> }} ReadFixtures
 */

/** @param {string} apiKey */
export const reviewHeaders = (apiKey) => ({
  authorization: `Bearer ${apiKey}`,
  'content-type': 'application/json',
});

/** @param {string} path @param {string} auth @param {string} token */
const introspection = (path, auth, token) => ({
  method: 'POST',
  path,
  headers: { authorization: auth, 'content-type': FORM },
  body: `token=${token}`,
  expect: ACTIVE,
});

/**
 * The payload of `token` with `jti` replaced, split around it, for load.lua's forged source.
 * @param {string} token
 */
export function forgedParts(token) {
  const [header, payload, signature] = token.split('.');
  const claims = JSON.parse(Buffer.from(/** @type {string} */ (payload), 'base64url').toString('utf8'));
  claims.jti = '\u0000';
  const [before, after] = JSON.stringify(claims).split('\u0000');
  return {
    header: /** @type {string} */ (header),
    before: /** @type {string} */ (before),
    after: /** @type {string} */ (after),
    signature: /** @type {string} */ (signature),
  };
}

/**
 * A wrk load minting `client_credentials` access tokens with `auth`, collecting each.
 * @param {string} auth
 */
const clientCredentialsMint = (auth) => ({
  method: 'POST',
  path: '/oauth/token',
  headers: { authorization: auth, 'content-type': FORM },
  body: 'grant_type=client_credentials',
  expect: ISSUED,
  collect: { file: '', field: 'access_token' },
});

/**
 * The token exchange's form (RFC 8693) of `pnpm bench`, `pair` and `instructions.mjs`: a job token
 * in place of `{1}` for a token to the `bench-soak` cluster.
 */
export const EXCHANGE_FORM =
  'grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange' +
  '&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Ajwt&audience=bench-soak&subject_token={1}';

/**
 * A wrk load of token exchanges, one never-seen job token of `file` (a `subjectTokens` pool) each.
 * @param {string} file
 */
export const exchangeLoad = (file) => ({
  method: /** @type {const} */ ('POST'),
  path: '/oauth/token',
  headers: { 'content-type': FORM },
  body: EXCHANGE_FORM,
  source: /** @type {const} */ ('pool'),
  file,
  expect: ISSUED,
});

/**
 * A wrk load of idgate's `client_credentials` grant with `auth` (`pnpm bench` and `pair`).
 * @param {string} auth
 */
export const clientCredentialsLoad = (auth) => {
  const { collect: _, ...spec } = clientCredentialsMint(auth);
  return spec;
};

/**
 * @param {import('./scenario.mjs').Runner} run @param {ReadFixtures} f
 */
export async function readScenarios(run, f) {
  const { wanted, scenario, options, tmp } = run;
  const review = { method: 'POST', path: '/oauth/authenticate', headers: reviewHeaders(f.apiKey) };

  // 1. TokenReview, warm, against the HTTP stack's limit and oidc-provider's introspection.
  const warm = { ...review, body: reviewBody(f.userToken), expect: VALID };
  if (wanted('bare.tokenreview'))
    await scenario('bare.tokenreview', 'bare', 'fixed TokenReview answer, nothing verified', warm);
  if (wanted('idgate.tokenreview-warm'))
    await scenario('idgate.tokenreview-warm', 'idgate', 'TokenReview, the same user token every time', warm);
  if (wanted('oidc-provider.introspection'))
    await scenario(
      'oidc-provider.introspection',
      'oidc-provider',
      'introspection of its opaque client_credentials token',
      introspection('/token/introspection', f.oidc.auth, f.oidc.token),
    );
  if (wanted('idgate.introspection'))
    await scenario(
      'idgate.introspection',
      'idgate',
      'introspection of a client_credentials token',
      introspection('/oauth/introspect', f.auth.service, f.serviceToken),
    );

  // 2. TokenReview, cold: a token the server has never seen on every request. A probe (which is
  // the warm-up) measures the rate, then enough tokens are minted for the measured run; a run whose
  // pool runs out ends early rather than repeat a token.
  const idgate = /** @type {import('./scenario.mjs').Server} */ (run.servers.idgate);
  const ccMint = clientCredentialsMint;
  const coldFile = join(tmp, 'cold.txt');
  const expiredFile = join(tmp, 'expired.txt');
  let coldMinted = 0;
  const needCold = wanted('idgate.tokenreview-cold');
  const needExpired = wanted('idgate.tokenreview-expired');
  const pool = (/** @type {string} */ file, start = 0) => ({
    ...review,
    body: REVIEW_TEMPLATE,
    source: /** @type {const} */ ('pool'),
    file,
    start,
  });
  if (needCold) {
    writeFileSync(coldFile, '');
    coldMinted = await run.mint(
      'tokens',
      idgate,
      ccMint(f.auth.service),
      Math.min(6000, options.maxTokens),
      coldFile,
    );
    const probe = await scenario(
      'probe.tokenreview-cold',
      'idgate',
      'cold TokenReview probe (sizes the pool; not reported)',
      { ...pool(coldFile), expect: VALID },
      { warmup: 0, duration: Math.max(1, options.warmup) },
    );
    run.measurements.pop();
    run.notes.splice(0, run.notes.length, ...run.notes.filter((note) => !note.startsWith('probe.')));
    // Threads take every other line and run unevenly: skip past the furthest any of them reached.
    const used = Math.ceil(probe.detail.sent * 1.2) + options.connections;
    // A one-second probe right after minting runs below the steady rate.
    const rate = probe.rps * 2;
    run.log(`cold probe: ${probe.rps.toFixed(0)} req/s; planning for ${rate.toFixed(0)} req/s`);
    {
      const more =
        Math.min(options.maxTokens, Math.ceil(rate * options.duration * 1.2)) - (coldMinted - used);
      if (more > 0) coldMinted += await run.mint('tokens', idgate, ccMint(f.auth.service), more, coldFile);
    }
    await scenario(
      'idgate.tokenreview-cold',
      'idgate',
      'TokenReview, a never-seen client_credentials token on every request',
      { ...pool(coldFile, used), expect: VALID },
      { warmup: 0 },
    );
  }

  // 3. TokenReview of invalid tokens, each one different.
  if (wanted('idgate.tokenreview-bad-signature'))
    await scenario(
      'idgate.tokenreview-bad-signature',
      'idgate',
      'TokenReview, a real token with a fresh jti in its payload: the signature does not match',
      {
        ...review,
        body: REVIEW_TEMPLATE,
        source: 'forged',
        forged: forgedParts(f.serviceToken),
        expect: INVALID,
      },
    );
  if (wanted('idgate.tokenreview-garbage'))
    await scenario('idgate.tokenreview-garbage', 'idgate', 'TokenReview, random JWT-shaped garbage', {
      ...review,
      body: REVIEW_TEMPLATE,
      source: 'garbage',
      expect: INVALID,
    });
  if (needExpired) {
    // Invalid tokens are answered faster than valid ones: the pool is sized from the fastest rate
    // of the reviews run so far.
    const rate = Math.max(
      1000,
      ...run.measurements.filter((m) => m.id.startsWith('idgate.tokenreview')).map((m) => m.rps),
    );
    writeFileSync(expiredFile, '');
    const amount = Math.min(options.maxTokens, Math.ceil(rate * options.duration * 1.3));
    await run.mint('expiring tokens', idgate, ccMint(f.auth.expiring), amount, expiredFile);
    // Lifetime 1 s and `exp` in whole seconds: all are expired 2.5 s after the minting began.
    const expiredReadyAt = Date.now() + 2500;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiredReadyAt - Date.now())));
    await scenario(
      'idgate.tokenreview-expired',
      'idgate',
      'TokenReview, a different expired token on every request',
      { ...pool(expiredFile), expect: INVALID },
      { warmup: 0 },
    );
  }

  // 4. Discovery and JWKS.
  const get = (/** @type {string} */ path, /** @type {string} */ includes) => ({
    method: 'GET',
    path,
    expect: { status: 200, bodyIncludes: includes },
  });
  const discovery = '/oauth/.well-known/openid-configuration';
  if (wanted('bare.discovery'))
    await scenario('bare.discovery', 'bare', 'fixed discovery document', get(discovery, '"issuer"'));
  if (wanted('idgate.discovery'))
    await scenario('idgate.discovery', 'idgate', 'discovery document', get(discovery, '"issuer"'));
  if (wanted('oidc-provider.discovery'))
    await scenario(
      'oidc-provider.discovery',
      'oidc-provider',
      'discovery document',
      get('/.well-known/openid-configuration', '"issuer"'),
    );
  if (wanted('bare.jwks')) await scenario('bare.jwks', 'bare', 'fixed JWKS', get('/oauth/keys', '"keys"'));
  if (wanted('idgate.jwks')) await scenario('idgate.jwks', 'idgate', 'JWKS', get('/oauth/keys', '"keys"'));

  // 5. Token endpoint, client_credentials: oidc-provider opaque, oidc-provider signing a JWT, idgate.
  const cc = (/** @type {string} */ path, /** @type {string} */ auth) => ({
    ...clientCredentialsLoad(auth),
    path,
  });
  if (wanted('oidc-provider.client-credentials'))
    await scenario(
      'oidc-provider.client-credentials',
      'oidc-provider',
      'token endpoint, client_credentials, opaque access token',
      cc('/token', f.oidc.auth),
    );
  if (wanted('oidc-provider-jwt.client-credentials'))
    await scenario(
      'oidc-provider-jwt.client-credentials',
      'oidc-provider-jwt',
      `token endpoint, client_credentials, ${options.alg} JWT access token (resource indicator)`,
      cc('/token', f.oidcJwt.auth),
    );
  if (wanted('idgate.client-credentials'))
    await scenario(
      'idgate.client-credentials',
      'idgate',
      'token endpoint, client_credentials',
      cc('/oauth/token', f.auth.service),
    );

  // 6. Token exchange (RFC 8693): a never-seen CI job token on every request, for a token to one
  // cluster; no client authentication. The job tokens are GitHub Actions' (RS256, its claims); a
  // second load has them signed ES256, as an issuer with P-256 keys signs. Each subject jti is
  // accepted once, so the tokens are a pool, sized for 4000 req/s over the run, and each load's
  // warm-up (not reported) has a pool of its own, as every other token endpoint load has a warm-up.
  for (const [id, alg, label] of /** @type {const} */ ([
    ['idgate.token-exchange', 'RS256', 'token endpoint, token exchange (GitHub Actions job token → cluster)'],
    ['idgate.token-exchange-es256', 'ES256', 'token endpoint, token exchange (ES256 job token → cluster)'],
  ])) {
    if (!wanted(id)) continue;
    const file = join(tmp, `subject-tokens-${alg}.txt`);
    const warmFile = join(tmp, `subject-tokens-${alg}-warmup.txt`);
    const amount = Math.min(options.maxTokens, Math.ceil(4000 * options.duration));
    const warmAmount = Math.min(options.maxTokens, Math.ceil(4000 * options.warmup));
    const started = Date.now();
    subjectTokens(f.ciKeys, amount + warmAmount, file, alg);
    // The last `warmAmount` lines go to the warm-up's file: every token is signed once, jtis distinct.
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    writeFileSync(file, `${lines.slice(0, amount).join('\n')}\n`);
    writeFileSync(warmFile, `${lines.slice(amount).join('\n')}\n`);
    run.log(
      `signed ${amount + warmAmount} ${alg} subject tokens in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    if (warmAmount > 0) {
      await scenario(
        `probe.${id.slice('idgate.'.length)}`,
        'idgate',
        `${label}: warm-up (not reported)`,
        exchangeLoad(warmFile),
        {
          warmup: 0,
          duration: options.warmup,
        },
      );
      run.measurements.pop();
      run.notes.splice(0, run.notes.length, ...run.notes.filter((note) => !note.startsWith('probe.')));
    }
    await scenario(id, 'idgate', label, exchangeLoad(file), { warmup: 0 });
  }
  return { coldMinted };
}
