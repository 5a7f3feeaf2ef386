import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenCache } from '../src/cache.js';
import { MFA_ACR, satisfies, stepUpAcr, tokenAcr } from '../src/step-up.js';
import { startOidcProviderIssuer, type TestIssuer } from './helpers/issuer.js';
import { tempDir } from './helpers/plugin.js';
import { runWithBrowser } from './helpers/sign-in.js';

const ISSUER = 'https://id.example.com/oauth';
const jwt = (claims: Record<string, unknown>) =>
  `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;

describe('step-up: what the plugin reads of idgate', () => {
  it("reads the acr of idgate's refusal of a refresh for want of a second factor", () => {
    // the description exactly as idgate words it (apps/server/test/interop/cluster-mfa.test.ts pins it)
    const description = `cluster prod requires a sign-in with a second factor (acr ${MFA_ACR}), and this grant's sign-in had none: sign in again (authorization code or device flow) with acr_values=${MFA_ACR}`;
    expect(stepUpAcr({ error: 'invalid_grant', error_description: description })).toBe(MFA_ACR);
  });

  it.each([
    ['another error', { error: 'invalid_target', error_description: `with acr_values=${MFA_ACR}` }],
    ['an ended sign-in', { error: 'invalid_grant', error_description: 'the refresh token was revoked' }],
    ['no description', { error: 'invalid_grant' }],
    [
      'acr_values not at the end',
      { error: 'invalid_grant', error_description: `acr_values=${MFA_ACR} or not` },
    ],
    ['acr_values inside a word', { error: 'invalid_grant', error_description: `xacr_values=${MFA_ACR}` }],
  ])('asks for no step-up on %s', (_, answer) => {
    expect(stepUpAcr(answer)).toBeUndefined();
  });

  it("reads a JWT access token's acr, and nothing of anything else", () => {
    expect(tokenAcr(jwt({ acr: MFA_ACR }))).toBe(MFA_ACR);
    expect(tokenAcr(jwt({ sub: 'alice' }))).toBeUndefined();
    expect(tokenAcr(jwt({ acr: 2 }))).toBeUndefined();
    expect(tokenAcr('opaque-token')).toBeUndefined();
    expect(tokenAcr('a.!!!.c')).toBeUndefined();
    expect(tokenAcr(`a.${Buffer.from('null').toString('base64url')}.c`)).toBeUndefined();
  });

  it('takes a token for a cluster only with the acr it requires', () => {
    expect(satisfies(undefined, undefined)).toBe(true);
    expect(satisfies('urn:idgate:acr:sf', undefined)).toBe(true);
    expect(satisfies(MFA_ACR, MFA_ACR)).toBe(true);
    expect(satisfies('urn:idgate:acr:sf', MFA_ACR)).toBe(false);
    expect(satisfies(undefined, MFA_ACR)).toBe(false);
  });

  it('remembers the acr a cluster requires across changes to the clusters known, and refuses a malformed one', async () => {
    const cache = await TokenCache.open(await tempDir('unit'));
    await cache.rememberClusters(ISSUER, 'kubectl', ['kubernetes:a']);
    await cache.requireAcr(ISSUER, 'kubectl', 'kubernetes:b', MFA_ACR);
    expect(await cache.readClusters(ISSUER, 'kubectl')).toEqual(['kubernetes:a', 'kubernetes:b']);
    await cache.rememberClusters(ISSUER, 'kubectl', ['kubernetes:c']);
    await cache.writeClusters({ issuer: ISSUER, clientId: 'kubectl', audiences: ['kubernetes:b'] });
    await cache.clearSignIn(ISSUER, 'kubectl');
    expect(await cache.readRequiredAcr(ISSUER, 'kubectl')).toEqual({ 'kubernetes:b': MFA_ACR });
    const { writeFile } = await import('node:fs/promises');
    await writeFile(
      cache.clustersPath(ISSUER, 'kubectl'),
      JSON.stringify({ issuer: ISSUER, clientId: 'kubectl', audiences: [], requiredAcr: { x: 1 } }),
    );
    await expect(cache.readRequiredAcr(ISSUER, 'kubectl')).rejects.toThrow(/is not valid/);
  });
});

describe('step-up against an issuer whose sign-in does not give the acr asked for', () => {
  let idp: TestIssuer;
  beforeAll(async () => {
    idp = await startOidcProviderIssuer();
  });
  afterAll(async () => idp.stop());

  it('signs in once with acr_values, then stops with an error instead of looping; a later run does not use the old token', async () => {
    const cacheDir = await tempDir('cache');
    const args = [
      ...['get-token', '--issuer', idp.issuer, '--client-id', idp.clientId, '--cluster', 'alpha'],
      ...['--cache-dir', cacheDir, '--no-browser'],
    ];
    const first = await runWithBrowser(idp, args);
    expect(first.code, first.stderr).toBe(0);
    const token = JSON.parse(first.stdout).status.token as string;

    idp.refuseRefreshFor = MFA_ACR;
    const later = {
      IDGATE_KUBECTL_NOW: new Date(Date.now() + (idp.accessTokenTtl + 60) * 1000).toISOString(),
    };
    for (const env of [later, {}]) {
      idp.requests.length = 0;
      const run = await runWithBrowser(idp, args, env);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(
        `kubernetes:alpha requires a sign-in with a second factor (acr ${MFA_ACR}): signing in again with acr_values=${MFA_ACR}.`,
      );
      // the one sign-in asked for the second factor
      const urls = run.stderr.split('\n').filter((line) => line.includes('code_challenge='));
      expect(urls).toHaveLength(1);
      expect(new URL(urls[0]?.trim() ?? '').searchParams.get('acr_values')).toBe(MFA_ACR);
      expect(idp.requests.filter((line) => line === 'GET /auth')).toHaveLength(1);
      expect(run.stderr).toMatch(
        new RegExp(
          `kubectl-idgate: kubernetes:alpha requires a sign-in with a second factor \\(acr ${MFA_ACR}\\), and the sign-in at .* had none \\(acr absent\\)`,
        ),
      );
      // the second run: the first token is fresh by the clock, but without the acr alpha requires
      expect(run.stdout).not.toContain(token);
    }
    // A refresh that succeeds without the acr alpha is now known to require is no better.
    idp.refuseRefreshFor = undefined;
    idp.requests.length = 0;
    idp.grants.length = 0;
    const renewed = await runWithBrowser(idp, args, later);
    expect(renewed.code).toBe(1);
    expect(idp.grants[0]).toBe('refresh_token');
    expect(renewed.stderr).toContain(`signing in again with acr_values=${MFA_ACR}.`);
    expect(idp.requests.filter((line) => line === 'GET /auth')).toHaveLength(1);
    expect(renewed.stderr).toContain('had none (acr absent)');
    // what was learnt is kept; no token without the acr was cached
    const files = await readdir(cacheDir);
    const clusters = files.find((name) => name.endsWith('.clusters.json')) as string;
    expect(JSON.parse(await readFile(join(cacheDir, clusters), 'utf8')).requiredAcr).toEqual({
      'kubernetes:alpha': MFA_ACR,
    });
  });
});
