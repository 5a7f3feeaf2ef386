import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createNativeClient, discoverIssuer, type IdgateHttpError } from '@idgate/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOidcProviderIssuer, type TestIssuer } from './helpers/issuer.js';
import { runPlugin, tempDir } from './helpers/plugin.js';
import { refusingPort } from './helpers/ports.js';
import { runWithBrowser } from './helpers/sign-in.js';

let idp: TestIssuer;
let cacheDir: string;

beforeAll(async () => {
  idp = await startOidcProviderIssuer();
});
afterAll(async () => {
  await idp.stop();
});
beforeEach(async () => {
  cacheDir = await tempDir('cache');
  idp.nextAccount = 'alice';
});

const getToken = (cluster: string, extra: string[] = []) => [
  'get-token',
  '--issuer',
  idp.issuer,
  '--client-id',
  idp.clientId,
  '--cluster',
  cluster,
  '--cache-dir',
  cacheDir,
  '--no-browser',
  ...extra,
];
/** The plugin's clock `seconds` from now (IDGATE_KUBECTL_NOW, for tests only). */
const later = (seconds: number) => ({
  IDGATE_KUBECTL_NOW: new Date(Date.now() + seconds * 1000).toISOString(),
});
const tokenOf = (stdout: string): string => JSON.parse(stdout).status.token;
async function signIn(cluster = 'alpha'): Promise<string> {
  const result = await runWithBrowser(idp, getToken(cluster));
  expect(result.code).toBe(0);
  idp.requests.length = 0;
  idp.grants.length = 0;
  return tokenOf(result.stdout);
}
async function refreshToken(): Promise<string> {
  const file = (await readdir(cacheDir)).find((name) => name.endsWith('.refresh.json'));
  return JSON.parse(await readFile(`${cacheDir}/${file}`, 'utf8')).refreshToken;
}

describe('the token cache', () => {
  it('answers a token with more than 30 s left without a single request', async () => {
    // The plugin's expiry is its clock at receipt plus expires_in: counted from before the sign-in,
    // 31 s before it holds however long the sign-in took.
    const before = Date.now();
    const token = await signIn();
    const result = await runPlugin(getToken('alpha'), {
      env: { IDGATE_KUBECTL_NOW: new Date(before + (idp.accessTokenTtl - 31) * 1000).toISOString() },
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(tokenOf(result.stdout)).toBe(token);
    expect(idp.requests).toEqual([]);
  });

  it('refreshes silently once the token has 30 s or less left, with the audience as resource', async () => {
    const token = await signIn();
    const result = await runPlugin(getToken('alpha'), { env: later(idp.accessTokenTtl - 30) });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(tokenOf(result.stdout)).not.toBe(token);
    expect(idp.grants).toEqual(['refresh_token']);
    const { decodeJwt } = await import('jose');
    expect(decodeJwt(tokenOf(result.stdout)).aud).toBe('kubernetes:alpha');
    // and the new token is cached: no request the next time
    idp.requests.length = 0;
    const again = await runPlugin(getToken('alpha'), { env: later(idp.accessTokenTtl - 30) });
    expect(tokenOf(again.stdout)).toBe(tokenOf(result.stdout));
    expect(idp.requests).toEqual([]);
  });

  it('five processes at once after expiry all succeed with one refresh, and the grant survives', async () => {
    await signIn();
    const expired = later(idp.accessTokenTtl + 60);
    const results = await Promise.all(
      Array.from({ length: 5 }, () => runPlugin(getToken('alpha'), { env: expired })),
    );
    for (const result of results) {
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    }
    expect(new Set(results.map((r) => tokenOf(r.stdout))).size).toBe(1);
    // a rotated refresh token presented twice would have revoked the grant: it was used once
    expect(idp.grants).toEqual(['refresh_token']);
    const next = await runPlugin(getToken('alpha'), { env: later(2 * idp.accessTokenTtl + 120) });
    expect(next.code).toBe(0);
    expect(next.stderr).toBe('');
    expect(idp.grants).toEqual(['refresh_token', 'refresh_token']);
  });

  it('signs in again when the refresh token no longer works', async () => {
    await signIn();
    const client = createNativeClient({ metadata: await discoverIssuer(idp.issuer), clientId: idp.clientId });
    await client.revoke({ token: await refreshToken(), tokenTypeHint: 'refresh_token' });
    const result = await runWithBrowser(idp, getToken('alpha'), later(idp.accessTokenTtl + 60));
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/cannot be renewed \(invalid_grant\): signing in again/);
    expect(idp.grants).toEqual(['refresh_token', 'authorization_code']);
  });
});

describe('kubectl-idgate logout', () => {
  it('revokes the refresh token (RFC 7009) and clears the cache; the next get-token signs in', async () => {
    await signIn();
    const spent = await refreshToken();
    const result = await runPlugin(['logout', '--cluster', 'alpha', '--cache-dir', cacheDir]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(`Signed out of ${idp.issuer} (client ${idp.clientId}).\n`);
    // no token is left; only the list of clusters a sign-in asks for, which holds none
    const left = await readdir(cacheDir);
    expect(left).toEqual([expect.stringMatching(/\.clusters\.json$/)]);
    expect(JSON.parse(await readFile(join(cacheDir, left[0] as string), 'utf8'))).toEqual({
      issuer: idp.issuer,
      clientId: idp.clientId,
      audiences: ['kubernetes:alpha'],
    });
    expect(idp.requests).toContain('POST /token/revocation');
    const client = createNativeClient({ metadata: await discoverIssuer(idp.issuer), clientId: idp.clientId });
    const error = await client.refresh({ refreshToken: spent }).catch((e: unknown) => e);
    expect((error as IdgateHttpError).oauthError?.error).toBe('invalid_grant');

    const next = await runPlugin(getToken('alpha', ['--timeout', '1']));
    expect(next.stderr).toContain('code_challenge=');
    expect(next.code).toBe(1);
  });

  it('clears cache files that are not valid, which get-token refuses, and the next get-token signs in', async () => {
    await signIn();
    const tokenFiles = (await readdir(cacheDir)).filter((name) => !name.endsWith('.clusters.json'));
    expect(tokenFiles).toHaveLength(2);
    for (const name of tokenFiles) await writeFile(join(cacheDir, name), '{ not json');
    // a valid entry in the file of another entry is not valid either
    await writeFile(
      join(cacheDir, `${'0'.repeat(32)}.refresh.json`),
      JSON.stringify({ issuer: idp.issuer, clientId: idp.clientId, refreshToken: 'misplaced' }),
    );
    const refused = await runPlugin(getToken('alpha'));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/is not valid: remove it, or run kubectl-idgate logout\n$/);

    const result = await runPlugin(['logout', '--cluster', 'alpha', '--cache-dir', cacheDir]);
    expect(result.code).toBe(0);
    for (const name of [...tokenFiles, `${'0'.repeat(32)}.refresh.json`])
      expect(result.stderr).toContain(
        `Removed ${join(cacheDir, name)}: it was not valid (nothing in it could be revoked).\n`,
      );
    expect(await readdir(cacheDir)).toEqual([expect.stringMatching(/\.clusters\.json$/)]);

    const next = await runWithBrowser(idp, getToken('alpha'));
    expect(next.stderr).toContain(`Sign in to ${idp.issuer} in your browser`);
    expect(next.code).toBe(0);
    expect(idp.grants).toEqual(['authorization_code']);
  });

  it('says so when not signed in', async () => {
    const result = await runPlugin(['logout', '--cache-dir', cacheDir]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('Not signed in: nothing to do.\n');
  });

  it('clears the cache but fails in one line when the issuer cannot be reached', async () => {
    const { TokenCache } = await import('../src/cache.js');
    const cache = await TokenCache.open(cacheDir);
    const port = await refusingPort();
    await cache.writeGrant({
      issuer: `http://127.0.0.1:${port}`,
      clientId: 'kubectl',
      refreshToken: 'refresh-secret-0123456789',
    });
    const result = await runPlugin(['logout', '--cache-dir', cacheDir]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n').at(-1)).toMatch(
      new RegExp(
        `^kubectl-idgate: the cached tokens are removed, but revoking the sign-in failed: cannot reach the issuer http://127\\.0\\.0\\.1:${port}\\b`,
      ),
    );
    expect(result.stderr).not.toContain('refresh-secret-0123456789');
    expect(await readdir(cacheDir)).toEqual([]);
  });
});
