import { spawn } from 'node:child_process';
import { chmod, readdir, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endsWithTest } from '../../server/test/helpers/child-processes.js';
import { type IdgateIssuer, startIdgate } from './helpers/idgate.js';
import { type StubApiServer, startStubApiServer } from './helpers/kube-apiserver.js';
import { structuredJwtAuthenticator, webhookAuthenticator } from './helpers/kube-authn.js';
import { KUBECTL } from './helpers/kubectl.js';
import { PLUGIN_BIN, runPlugin, tempDir, urlIn } from './helpers/plugin.js';

/**
 * Issue 10's acceptance test against idgate itself: a real idgate (the built server, SQLite, seeded
 * through its CLI) behind https on 127.0.0.1, two clusters registered with `idgate clusters add`,
 * real kubectl 1.20 through kubectl-idgate, and two stub API servers that authenticate as
 * Kubernetes does: alpha through the TokenReview webhook with the kubeconfig `clusters show
 * --webhook-kubeconfig` printed, beta with the JWT authenticator configured by the
 * AuthenticationConfiguration `clusters show --authentication-config --certificate-authority`
 * printed (CEL by cel-js; idgate's certificate trusted through the CA it carries).
 */

const ALICE = { username: 'alice', password: 'battery-staple-2c07e0' };

let idgate: IdgateIssuer;
let alpha: StubApiServer;
let beta: StubApiServer;
let jwtRefusals: string[];
let clientId: string;
let dir: string;
let kubeconfig: string;
let cacheDir: string;

async function idgateCli(args: string[], input?: string): Promise<string> {
  const result = await idgate.cli(args, input);
  if (result.code !== 0) throw new Error(`idgate ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

beforeAll(async () => {
  dir = await tempDir('idgate');
  idgate = await startIdgate({ dir, accessTokenTtl: 600 });
  await idgateCli(['init', '--json']);
  await idgateCli(
    ['users', 'add', ALICE.username, '--group', 'platform', '--group', 'developers', '--password-stdin'],
    `${ALICE.password}\n`,
  );
  const added = JSON.parse(await idgateCli(['clusters', 'add', 'alpha', '--json']));
  clientId = added.cluster.kubectlClientId;
  expect(clientId).toMatch(/^cl_/);
  const second = JSON.parse(await idgateCli(['clusters', 'add', 'beta', '--json']));
  expect(second.cluster.kubectlClientId).toBe(clientId);

  const webhookConfig = await idgateCli([
    'clusters',
    'show',
    'alpha',
    '--webhook-kubeconfig',
    '--certificate-authority',
    idgate.caFile,
  ]);
  alpha = await startStubApiServer({
    issuer: idgate.issuer,
    audience: 'kubernetes:alpha',
    dir,
    authenticate: webhookAuthenticator(webhookConfig, ['kubernetes:alpha']),
  });
  // the API server trusts idgate's certificate through the CA the configuration carries
  const jwt = await structuredJwtAuthenticator(
    await idgateCli([
      'clusters',
      'show',
      'beta',
      '--authentication-config',
      '--certificate-authority',
      idgate.caFile,
    ]),
  );
  jwtRefusals = jwt.refusals;
  beta = await startStubApiServer({
    issuer: idgate.issuer,
    audience: 'kubernetes:beta',
    dir,
    authenticate: jwt.authenticate,
  });

  kubeconfig = join(dir, 'config');
  cacheDir = join(dir, 'cache');
  const command = join(dir, 'kubectl-idgate');
  await writeFile(command, `#!/bin/sh\nexec "${process.execPath}" "${PLUGIN_BIN}" "$@"\n`);
  await chmod(command, 0o755);
  for (const [cluster, stub] of [
    ['alpha', alpha],
    ['beta', beta],
  ] as const) {
    const result = await runPlugin([
      'setup',
      ...['--issuer', idgate.issuer, '--client-id', clientId, '--cluster', cluster],
      ...['--server', stub.url, '--certificate-authority', stub.caFile, '--kubeconfig', kubeconfig],
      ...['--command', command, '--cache-dir', cacheDir],
    ]);
    expect(result.code, result.stderr).toBe(0);
  }
});

afterAll(async () => {
  await alpha?.stop();
  await beta?.stop();
  await idgate?.stop();
});

interface KubectlRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs kubectl like a person on a headless host (no DISPLAY: the plugin uses the device flow).
 * `signIn: 'approve'` completes a device sign-in on idgate's page when its URL is printed;
 * `'abandon'` kills kubectl and the plugin (the whole process group) once the prompt is shown.
 */
function kubectl(
  args: string[],
  options: { env?: Record<string, string>; signIn?: 'approve' | 'abandon' } = {},
): Promise<KubectlRun> {
  return new Promise((resolve, reject) => {
    const child = endsWithTest(
      spawn(KUBECTL as string, ['--kubeconfig', kubeconfig, ...args], {
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: dir,
          NODE_EXTRA_CA_CERTS: idgate.caFile,
          ...options.env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      }),
    );
    let stdout = '';
    let stderr = '';
    let approval: Promise<unknown> | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const url = stderr
        .split('\n')
        .map(urlIn)
        .find((u) => u?.includes('user_code='));
      if (url === undefined || approval !== undefined) return;
      if (options.signIn === 'approve') approval = idgate.approveDevice(url, ALICE);
      else if (options.signIn === 'abandon') {
        approval = Promise.resolve();
        process.kill(-(child.pid as number), 'SIGTERM');
      }
    });
    child.on('error', reject);
    child.on('close', async (code) => {
      try {
        await approval;
        resolve({ code, stdout, stderr });
      } catch (error) {
        reject(error);
      }
    });
  });
}

/** GET /api of a stub API server with a bearer token: the status. */
function getApi(server: StubApiServer, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    readFile(server.caFile, 'utf8').then((ca) => {
      const req = request(
        `${server.url}/api`,
        { ca, headers: { authorization: `Bearer ${token}` } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    }, reject);
  });
}

/** The access tokens kubectl-idgate cached, by audience. */
async function cachedTokens(): Promise<Record<string, string>> {
  const tokens: Record<string, string> = {};
  for (const name of await readdir(cacheDir)) {
    if (!name.endsWith('.token.json')) continue;
    const entry = JSON.parse(await readFile(join(cacheDir, name), 'utf8'));
    tokens[entry.audience] = entry.accessToken;
  }
  return tokens;
}

/** What the plugin asked idgate, without the API servers' own calls (webhook, discovery, JWKS). */
function pluginRequests(): string[] {
  return idgate.requests
    .filter((r) => r.line !== 'POST /oauth/authenticate')
    .map((r) =>
      r.grantType === undefined && r.resource === undefined
        ? r.line
        : `${r.line} ${r.grantType ?? '-'} ${r.resource ?? '-'}`,
    );
}

/** The plugin's clock `factor` access-token lifetimes from now (it trusts the cache while > 30 s remain). */
function later(factor: number): Record<string, string> {
  return {
    IDGATE_KUBECTL_NOW: new Date(Date.now() + factor * (idgate.accessTokenTtl + 60) * 1000).toISOString(),
  };
}

const ALICE_AS_KUBERNETES_SEES_HER = { username: 'alice', groups: ['developers', 'platform'] };

describe.skipIf(KUBECTL === undefined)(
  'kubectl against idgate: one sign-in, a webhook cluster and a structured-authentication cluster',
  () => {
    it('webhook cluster alpha: kubectl signs in with the device flow on idgate and is alice', async () => {
      idgate.requests.length = 0;
      const result = await kubectl(['--context', 'alpha', 'get', '--raw', '/api'], { signIn: 'approve' });
      expect(result.stderr).toContain('user_code=');
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).kind).toBe('APIVersions');
      expect(alpha.users).toEqual([expect.objectContaining(ALICE_AS_KUBERNETES_SEES_HER)]);
      expect(alpha.users[0]?.extra?.['idgate.dev/client-id']).toEqual([clientId]);
      const asked = pluginRequests().filter((line) => /device_authorization|token/.test(line));
      // one sign-in for every cluster set up, this one first; the token is for this one only
      expect(asked[0]).toBe('POST /oauth/device_authorization - kubernetes:alpha,kubernetes:beta');
      // the page named both clusters the sign-in reaches
      const page = idgate.confirmations.at(-1) as string;
      expect(page).toContain('Cluster: <strong>alpha</strong>');
      expect(page).toContain('Cluster: <strong>beta</strong>');
      // polled (interval 1 s) until alice allowed it on idgate's page
      expect(new Set(asked.slice(1))).toEqual(
        new Set(['POST /oauth/token urn:ietf:params:oauth:grant-type:device_code kubernetes:alpha']),
      );
    });

    it('JWT cluster beta: the same sign-in serves it through a silent refresh with resource=kubernetes:beta', async () => {
      idgate.requests.length = 0;
      const result = await kubectl(['--context', 'beta', 'get', '--raw', '/api']);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout).kind).toBe('APIVersions');
      expect(jwtRefusals).toEqual([]);
      expect(beta.users).toEqual([expect.objectContaining(ALICE_AS_KUBERNETES_SEES_HER)]);
      expect(beta.users[0]?.uid).toMatch(/^[0-9a-f-]{36}$/);
      expect(beta.users[0]?.extra?.['idgate.dev/client-id']).toEqual([clientId]);
      expect(pluginRequests().filter((line) => line.startsWith('POST'))).toEqual([
        'POST /oauth/token refresh_token kubernetes:beta',
      ]);
    });

    it('a token for alpha is refused by beta and a token for beta by alpha', async () => {
      const tokens = await cachedTokens();
      const forAlpha = tokens['kubernetes:alpha'] as string;
      const forBeta = tokens['kubernetes:beta'] as string;
      expect(forAlpha).toEqual(expect.any(String));
      expect(forBeta).toEqual(expect.any(String));
      expect(await getApi(alpha, forAlpha)).toBe(200);
      expect(await getApi(beta, forBeta)).toBe(200);
      const refusedBefore = { alpha: alpha.refused, beta: beta.refused };
      expect(await getApi(beta, forAlpha)).toBe(401);
      expect(jwtRefusals.at(-1)).toMatch(/aud/);
      expect(await getApi(alpha, forBeta)).toBe(401);
      expect({ alpha: alpha.refused, beta: beta.refused }).toEqual({
        alpha: refusedBefore.alpha + 1,
        beta: refusedBefore.beta + 1,
      });
    });

    it('a second run makes no request to idgate', async () => {
      idgate.requests.length = 0;
      for (const context of ['alpha', 'beta']) {
        const result = await kubectl(['--context', context, 'get', '--raw', '/api']);
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
      }
      expect(pluginRequests()).toEqual([]);
      // only the webhook's TokenReview reached idgate
      expect(idgate.requests.map((r) => r.line)).toEqual(['POST /oauth/authenticate']);
      expect(alpha.users.at(-1)).toMatchObject(ALICE_AS_KUBERNETES_SEES_HER);
      expect(beta.users.at(-1)).toMatchObject(ALICE_AS_KUBERNETES_SEES_HER);
    });

    it('after expiry the tokens of both clusters are refreshed silently', async () => {
      idgate.requests.length = 0;
      for (const context of ['alpha', 'beta']) {
        const result = await kubectl(['--context', context, 'get', '--raw', '/api'], { env: later(1) });
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
      }
      expect(pluginRequests().filter((line) => line.startsWith('POST'))).toEqual([
        'POST /oauth/token refresh_token kubernetes:alpha',
        'POST /oauth/token refresh_token kubernetes:beta',
      ]);
    });

    it('five kubectl processes started together after expiry all succeed, and the grant survives', async () => {
      idgate.requests.length = 0;
      const usersBefore = alpha.users.length;
      const results = await Promise.all(
        Array.from({ length: 5 }, () =>
          kubectl(['--context', 'alpha', 'get', '--raw', '/api'], { env: later(3) }),
        ),
      );
      for (const result of results) {
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
      }
      expect(alpha.users.slice(usersBefore)).toHaveLength(5);
      expect(pluginRequests().filter((line) => line.startsWith('POST'))).toEqual([
        'POST /oauth/token refresh_token kubernetes:alpha',
      ]);
      // the rotated refresh token is the one kept: the grant was not revoked as a replay
      idgate.requests.length = 0;
      const next = await kubectl(['--context', 'beta', 'get', '--raw', '/api'], { env: later(5) });
      expect(next.stderr).toBe('');
      expect(next.code).toBe(0);
      expect(pluginRequests().filter((line) => line.startsWith('POST'))).toEqual([
        'POST /oauth/token refresh_token kubernetes:beta',
      ]);
    });

    it('a cluster set up after the sign-in takes one more sign-in, for every cluster; the old one is revoked', async () => {
      const added = JSON.parse(await idgateCli(['clusters', 'add', 'gamma', '--json']));
      expect(added.cluster.kubectlClientId).toBe(clientId);
      const command = join(dir, 'kubectl-idgate');
      const result = await runPlugin([
        'setup',
        ...['--issuer', idgate.issuer, '--client-id', clientId, '--cluster', 'gamma'],
        ...['--server', alpha.url, '--certificate-authority', alpha.caFile, '--kubeconfig', kubeconfig],
        ...['--command', command, '--cache-dir', cacheDir],
      ]);
      expect(result.code, result.stderr).toBe(0);
      idgate.requests.length = 0;
      // gamma's context points at alpha's stub, which accepts only alpha's tokens: what matters
      // here is what the plugin asks idgate for
      await kubectl(['--context', 'gamma', 'get', '--raw', '/api'], { signIn: 'approve' });
      const asked = pluginRequests().filter((line) => line.startsWith('POST'));
      expect(asked[0]).toBe(
        'POST /oauth/device_authorization - kubernetes:gamma,kubernetes:alpha,kubernetes:beta',
      );
      expect(asked.at(-1)).toBe('POST /oauth/revoke');
      const page = idgate.confirmations.at(-1) as string;
      for (const cluster of ['alpha', 'beta', 'gamma'])
        expect(page).toContain(`Cluster: <strong>${cluster}</strong>`);
      expect(
        JSON.parse(
          Buffer.from(
            (await cachedTokens())['kubernetes:gamma']?.split('.')[1] ?? '',
            'base64url',
          ).toString(),
        ).aud,
      ).toBe('kubernetes:gamma');
      // the new sign-in serves the others by refresh, without asking again
      idgate.requests.length = 0;
      for (const context of ['alpha', 'beta']) {
        const run = await kubectl(['--context', context, 'get', '--raw', '/api'], { env: later(9) });
        expect(run.stderr).toBe('');
        expect(run.code).toBe(0);
      }
      expect(pluginRequests().filter((line) => line.startsWith('POST'))).toEqual([
        'POST /oauth/token refresh_token kubernetes:alpha',
        'POST /oauth/token refresh_token kubernetes:beta',
      ]);
      await idgateCli(['clusters', 'remove', 'gamma']);
    });

    it('after kubectl-idgate logout kubectl is asked to sign in again', async () => {
      idgate.requests.length = 0;
      const out = await runPlugin(['logout', '--cluster', 'alpha', '--cache-dir', cacheDir], {
        env: { NODE_EXTRA_CA_CERTS: idgate.caFile },
      });
      expect(out.code, out.stderr).toBe(0);
      expect(pluginRequests()).toContain('POST /oauth/revoke');
      const result = await kubectl(['--context', 'alpha', 'get', '--raw', '/api'], { signIn: 'approve' });
      expect(result.stderr).toContain('user_code=');
      expect(result.code, result.stderr).toBe(0);
      expect(alpha.users.at(-1)).toMatchObject(ALICE_AS_KUBERNETES_SEES_HER);
      // gamma, set up before, was removed from idgate since: idgate refuses a sign-in that names
      // it (invalid_target), and the plugin asks again without it, and forgets it
      expect(pluginRequests().filter((line) => line.includes('device_authorization'))).toEqual([
        'POST /oauth/device_authorization - kubernetes:alpha,kubernetes:beta,kubernetes:gamma',
        'POST /oauth/device_authorization - kubernetes:alpha,kubernetes:beta',
      ]);
      expect(result.stderr).toContain(
        'refused some of the clusters set up (invalid_target): signing in for kubernetes:alpha, kubernetes:beta.',
      );
    });

    it('after an admin revocation (idgate users disable) kubectl is asked to sign in again', async () => {
      await idgateCli(['users', 'disable', ALICE.username]);
      try {
        // the webhook refuses her current token as soon as the server has read the CLI's change
        // (the change log is read every second on SQLite) ...
        const current = (await cachedTokens())['kubernetes:alpha'] as string;
        await expect.poll(() => getApi(alpha, current), { timeout: 5_000, interval: 100 }).toBe(401);
        // ... and the next renewal of the sign-in fails: the plugin starts a new sign-in
        idgate.requests.length = 0;
        const result = await kubectl(['--context', 'beta', 'get', '--raw', '/api'], {
          env: later(7),
          signIn: 'abandon',
        });
        expect(result.stderr).toContain('cannot be renewed (invalid_grant): signing in again');
        expect(result.stderr).toContain('user_code=');
        expect(result.code).not.toBe(0);
        expect(pluginRequests()).toContain(
          'POST /oauth/device_authorization - kubernetes:beta,kubernetes:alpha',
        );
      } finally {
        await idgateCli(['users', 'enable', ALICE.username]);
      }
    });
  },
);
