import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import type { TrustRecord } from '../src/model.js';
import { evaluateSubjectToken, renderUsername, runClaims } from '../src/trusts/evaluate.js';
import { createTrustKeySource } from '../src/trusts/keys.js';

const ISSUER = 'https://ci.example';

function trust(overrides: Partial<TrustRecord> = {}): TrustRecord {
  const at = new Date(0);
  return {
    name: 'ci',
    issuer: ISSUER,
    audience: 'idgate',
    jwks: null,
    discoveryUrl: null,
    condition: null,
    username: 'ci:{repository}',
    groups: ['b', 'a', 'a'],
    clusters: ['prod'],
    maxTtl: 900,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}

/** An issuer's discovery and JWKS answered from memory, counting the JWKS fetches. */
function issuerFetch(keys: () => unknown[]) {
  const state = { jwksFetches: 0, down: false, issuer: ISSUER };
  const fetch = (async (input: string | URL | Request) => {
    const url = String(input);
    if (state.down) throw new TypeError('fetch failed');
    if (url === `${ISSUER}/.well-known/openid-configuration`)
      return Response.json({ issuer: state.issuer, jwks_uri: `${ISSUER}/jwks` });
    if (url === `${ISSUER}/jwks`) {
      state.jwksFetches++;
      return Response.json({ keys: keys() });
    }
    return new Response('', { status: 404 });
  }) as typeof globalThis.fetch;
  return { fetch, state };
}

describe('trust keys', () => {
  it('keeps a fetched key set for its lifetime, refetches for an unknown kid at most every 30 s, and outlives an unreachable issuer', async () => {
    let now = 1_000_000;
    const clock = { now: () => now };
    const { fetch, state } = issuerFetch(() => [{ kty: 'EC', kid: `k${state.jwksFetches}` }]);
    const source = createTrustKeySource({ fetch, clock });
    const first = await source.keysFor(trust());
    expect(first).toMatchObject({ ok: true, source: 'fetched', keys: [{ kid: 'k1' }] });
    expect(await source.keysFor(trust())).toMatchObject({ ok: true, source: 'cached' });
    expect(await source.keysFor(trust(), { refresh: true })).toMatchObject({ source: 'cached' });
    now += 30_000;
    expect(await source.keysFor(trust(), { refresh: true })).toMatchObject({
      source: 'fetched',
      keys: [{ kid: 'k2' }],
    });
    now += 300_000;
    state.down = true;
    expect(await source.keysFor(trust())).toMatchObject({
      ok: true,
      source: 'cached',
      keys: [{ kid: 'k2' }],
    });
    expect(state.jwksFetches).toBe(2);
    const never = createTrustKeySource({ fetch, clock });
    expect(await never.keysFor(trust())).toMatchObject({ ok: false, reason: 'jwks_unreachable' });
  });

  it('refuses discovery that names another issuer, and answers inline keys without fetching', async () => {
    const { fetch, state } = issuerFetch(() => []);
    state.issuer = 'https://evil.example';
    const source = createTrustKeySource({ fetch, clock: { now: () => 0 } });
    expect(await source.keysFor(trust())).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/names another issuer/),
    });
    const inline = trust({ jwks: { keys: [{ kty: 'EC', kid: 'x' }] } });
    expect(await source.keysFor(inline)).toMatchObject({ ok: true, source: 'inline' });
    expect(state.jwksFetches).toBe(0);
  });
});

describe('evaluating a subject token', () => {
  it('accepts under the first trust of the issuer that matches, with the identity and the lifetime left', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k' };
    const now = 2_000_000_000_000;
    const clock = { now: () => now };
    const keys = createTrustKeySource({ fetch: globalThis.fetch, clock });
    const token = await new SignJWT({ repository: 'acme/infra', ref: 'refs/heads/main', jti: 'j1' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k' })
      .setIssuer(ISSUER)
      .setSubject('repo:acme/infra')
      .setAudience('idgate')
      .setExpirationTime(now / 1000 + 120)
      .sign(privateKey);
    const strict = trust({
      name: 'a-strict',
      jwks: { keys: [jwk] },
      condition: 'claims.ref == "refs/heads/dev"',
    });
    const open = trust({ name: 'b-open', jwks: { keys: [jwk] } });
    const decision = await evaluateSubjectToken(token, [strict, open], { keys, clock });
    expect(decision).toMatchObject({
      ok: true,
      username: 'ci:acme/infra',
      groups: ['a', 'b'],
      maxLifetime: 120,
    });
    expect(decision.ok && decision.trust.name).toBe('b-open');
    const refused = await evaluateSubjectToken(token, [strict], { keys, clock });
    expect(refused).toMatchObject({ ok: false, rule: 'condition', trust: { name: 'a-strict' } });
    const broken = trust({ jwks: { keys: [jwk] }, condition: 'claims.missing.deeper == 1' });
    expect(await evaluateSubjectToken(token, [broken], { keys, clock })).toMatchObject({
      ok: false,
      rule: 'condition',
      reason: expect.stringMatching(/could not be evaluated/),
    });
  });

  it('renders usernames and reads CI-run claims', () => {
    expect(renderUsername('ci:{repository}@{ref}', { repository: 'a/b', ref: 'main' })).toEqual({
      ok: true,
      username: 'ci:a/b@main',
    });
    expect(renderUsername('ci:{repository}', { repository: '' })).toEqual({ ok: false, claim: 'repository' });
    expect(renderUsername('ci:{n}', { n: 7 })).toEqual({ ok: true, username: 'ci:7' });
    expect(runClaims({ repository: 'a/b', ref: 'main', workflow: 'deploy', run_id: 42, other: 'x' })).toEqual(
      { repository: 'a/b', ref: 'main', workflow: 'deploy', runId: '42' },
    );
    expect(runClaims({ project_path: 'g/p', pipeline_id: 9, job_id: 3 })).toEqual({
      repository: 'g/p',
      pipeline: '9',
      job: '3',
    });
    expect(runClaims({ 'kubernetes.io': { namespace: 'deploy', pod: { name: 'runner' } } })).toEqual({
      namespace: 'deploy',
      pod: 'runner',
    });
  });
});
