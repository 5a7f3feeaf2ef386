import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { accessSync, constants, realpathSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { delimiter, join } from 'node:path';
import { createIdgateAdminClient } from '@idgate/sdk';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { endsWithTest } from '../../server/test/helpers/child-processes.js';
import { type IdgateIssuer, startIdgate } from './helpers/idgate.js';
import { type StubApiServer, startStubApiServer } from './helpers/kube-apiserver.js';
import { webhookAuthenticator } from './helpers/kube-authn.js';
import { KUBECTL } from './helpers/kubectl.js';
import { PLUGIN_BIN, type PluginRun, runPlugin, tempDir } from './helpers/plugin.js';

/**
 * Issue 26, item 4: `kubectl-idgate get-token --exchange` in a simulated GitHub Actions job. A
 * loopback stand-in for GitHub (its token request URL, which mints GitHub-Actions-shaped JWTs with
 * jose, and its issuer's discovery and JWKS), a real idgate with a trust created through the admin
 * SDK, a stub cluster whose TokenReview goes to idgate, and real kubectl (Debian's 1.20 and the
 * newest the machine has) running the plugin from a kubeconfig. Also a projected service-account
 * token file, and the errors.
 */

const REQUEST_TOKEN = 'gha-request-token-5d1c0e';
const REPOSITORY = 'acme/infra';

interface GithubStandIn {
  issuer: string;
  requestUrl: string;
  /** The audience of each token minted, in order. */
  minted: string[];
  /** Which repository the next tokens are for. */
  repository: string;
  stop(): Promise<void>;
}

async function startGithub(): Promise<GithubStandIn> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'gha-1', alg: 'RS256', use: 'sig' };
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const standIn: GithubStandIn = {
    issuer: origin,
    requestUrl: `${origin}/_apis/pipelines/idtoken?api-version=2.0`,
    minted: [],
    repository: REPOSITORY,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on('request', async (req, res) => {
    const url = new URL(req.url ?? '/', origin);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/.well-known/openid-configuration')
      return json(200, { issuer: origin, jwks_uri: `${origin}/.well-known/jwks` });
    if (url.pathname === '/.well-known/jwks') return json(200, { keys: [jwk] });
    if (url.pathname !== '/_apis/pipelines/idtoken') return json(404, { message: 'not found' });
    if (req.headers.authorization !== `Bearer ${REQUEST_TOKEN}`) return json(401, { message: 'bad token' });
    const audience = url.searchParams.get('audience') ?? origin;
    standIn.minted.push(audience);
    const now = Math.floor(Date.now() / 1000);
    const value = await new SignJWT({
      repository: standIn.repository,
      repository_owner: standIn.repository.split('/')[0],
      ref: 'refs/heads/main',
      workflow: 'deploy',
      event_name: 'push',
      run_id: '6021',
      run_attempt: '1',
      actor: 'octocat',
    })
      .setProtectedHeader({ alg: 'RS256', kid: 'gha-1', typ: 'JWT' })
      .setIssuer(origin)
      .setSubject(`repo:${standIn.repository}:ref:refs/heads/main`)
      .setAudience(audience)
      .setJti(randomUUID())
      .setIssuedAt(now)
      .setNotBefore(now - 5)
      .setExpirationTime(now + 300)
      .sign(privateKey);
    json(200, { count: 1, value });
  });
  return standIn;
}

/** Debian's kubectl (KUBECTL) and the first other kubectl on PATH (the newest the machine has). */
function kubectls(): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  const candidates = [
    ...(KUBECTL === undefined ? [] : [KUBECTL]),
    ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'kubectl')),
  ];
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      const real = realpathSync(candidate);
      if (seen.has(real)) continue;
      seen.add(real);
      found.push(candidate);
    } catch {
      // not there
    }
    if (found.length === 2) break;
  }
  return found;
}

let idgate: IdgateIssuer;
let github: GithubStandIn;
let prod: StubApiServer;
let dir: string;
let command: string;
let saKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

/** The SDK's fetch through idgate's https front (whose CA the test process does not trust otherwise). */
const frontFetch: typeof fetch = async (input, init) => {
  const req = new Request(input, init);
  const body = req.body === null ? undefined : await req.text();
  const answer = await idgate.request(req.url, {
    method: req.method,
    headers: Object.fromEntries(req.headers.entries()),
    body,
  });
  const out = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (typeof value === 'string') out.set(name, value);
  }
  return new Response(answer.status === 204 ? null : answer.text, { status: answer.status, headers: out });
};

async function idgateCli(args: string[], input?: string): Promise<string> {
  const result = await idgate.cli(args, input);
  if (result.code !== 0) throw new Error(`idgate ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

beforeAll(async () => {
  dir = await tempDir('exchange');
  idgate = await startIdgate({ dir, accessTokenTtl: 600 });
  github = await startGithub();
  await idgateCli(['init', '--json']);
  await idgateCli(['clusters', 'add', 'prod', '--json']);
  const webhookConfig = await idgateCli([
    ...['clusters', 'show', 'prod', '--webhook-kubeconfig'],
    ...['--certificate-authority', idgate.caFile],
  ]);
  prod = await startStubApiServer({
    issuer: idgate.issuer,
    audience: 'kubernetes:prod',
    dir,
    authenticate: webhookAuthenticator(webhookConfig, ['kubernetes:prod']),
  });

  const key = JSON.parse(
    await idgateCli([
      'api-keys',
      'add',
      'ci-setup',
      '--scope',
      'trusts:write',
      '--scope',
      'trusts:read',
      '--json',
    ]),
  );
  const admin = createIdgateAdminClient({
    baseUrl: idgate.issuer.replace(/\/oauth$/, ''),
    apiKey: key.key,
    fetch: frontFetch,
  });
  await admin.createTrust({
    name: 'gha',
    issuer: github.issuer,
    audience: 'idgate',
    condition: `claims.repository == "${REPOSITORY}" && claims.ref == "refs/heads/main"`,
    username: 'ci:{repository}',
    groups: ['ci-deployers'],
    clusters: ['prod'],
    maxTtl: 900,
  });
  // a cluster's service-account issuer, its keys given inline
  const pair = await generateKeyPair('ES256');
  saKey = pair.privateKey;
  const saJwk = { ...(await exportJWK(pair.publicKey)), kty: 'EC', kid: 'sa-1', alg: 'ES256', use: 'sig' };
  await admin.createTrust({
    name: 'cluster-a',
    issuer: 'https://kubernetes.default.svc.cluster.local',
    audience: 'idgate',
    jwks: { keys: [saJwk] },
    condition: 'claims["kubernetes.io"].namespace == "deploy"',
    username: 'cluster-a:{sub}',
    groups: ['cross-cluster'],
    clusters: ['prod'],
    maxTtl: 300,
  });

  // what `npm install -g @idgate/kubectl` puts on PATH
  command = join(dir, 'kubectl-idgate');
  await writeFile(command, `#!/bin/sh\nexec "${process.execPath}" "${PLUGIN_BIN}" "$@"\n`);
  await chmod(command, 0o755);
});

afterAll(async () => {
  await prod?.stop();
  await github?.stop();
  await idgate?.stop();
});

/** A projected service-account token of cluster A (namespace `deploy`), as the kubelet writes it. */
async function serviceAccountToken(namespace = 'deploy'): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    'kubernetes.io': {
      namespace,
      serviceaccount: { name: 'deployer', uid: 'b7a1c1a0-2f4e-4d0e-9a51-0d7c5c0f1e11' },
      pod: { name: 'deployer-7d9f', uid: 'e2c0a9f4-62a4-4d5c-8d49-36d1bbf0c3a2' },
    },
  })
    .setProtectedHeader({ alg: 'ES256', kid: 'sa-1' })
    .setIssuer('https://kubernetes.default.svc.cluster.local')
    .setSubject(`system:serviceaccount:${namespace}:deployer`)
    .setAudience('idgate')
    .setJti(randomUUID())
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(saKey);
}

/** A kubeconfig whose user runs `kubectl-idgate get-token --exchange ...extra`. */
async function kubeconfigFor(name: string, extra: string[]): Promise<{ path: string; cacheDir: string }> {
  const home = join(dir, name);
  await mkdir(home, { recursive: true });
  const cacheDir = join(home, 'cache');
  const path = join(home, 'config');
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'prod', cluster: { server: prod.url, 'certificate-authority': prod.caFile } }],
    users: [
      {
        name: 'ci',
        user: {
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1beta1',
            command,
            args: [
              ...['get-token', '--exchange', '--issuer', idgate.issuer, '--cluster', 'prod'],
              ...['--cache-dir', cacheDir, ...extra],
            ],
            interactiveMode: 'Never',
          },
        },
      },
    ],
    contexts: [{ name: 'prod', context: { cluster: 'prod', user: 'ci' } }],
    'current-context': 'prod',
  };
  await writeFile(path, stringify(config));
  return { path, cacheDir };
}

/** Runs `kubectl` as a CI job does: the job's environment, no one at the terminal. */
function kubectl(binary: string, kubeconfig: string, args: string[], env: Record<string, string>) {
  return new Promise<PluginRun>((resolve, reject) => {
    const child = endsWithTest(
      spawn(binary, ['--kubeconfig', kubeconfig, ...args], {
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: dir,
          NODE_EXTRA_CA_CERTS: idgate.caFile,
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const githubJob = () => ({
  GITHUB_ACTIONS: 'true',
  ACTIONS_ID_TOKEN_REQUEST_URL: github.requestUrl,
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: REQUEST_TOKEN,
});

/** The token-exchange requests idgate received since `from`. */
const exchanges = (from: number) =>
  idgate.requests.slice(from).filter((seen) => seen.grantType?.endsWith(':token-exchange'));

function getApi(token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    readFile(prod.caFile, 'utf8').then((ca) => {
      const req = request(`${prod.url}/api`, { ca, headers: { authorization: `Bearer ${token}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    }, reject);
  });
}

const KUBECTLS = kubectls();

describe.skipIf(KUBECTL === undefined)('kubectl in a simulated GitHub Actions job', () => {
  it('finds Debian’s kubectl and another one', () => {
    expect(KUBECTLS.length).toBeGreaterThanOrEqual(1);
  });

  for (const [index, binary] of KUBECTLS.entries()) {
    it(`kubectl #${index + 1} (${binary}) reaches the cluster as ci:${REPOSITORY}, then from the cache`, async () => {
      const { path } = await kubeconfigFor(`gha-${index}`, []);
      const minted = github.minted.length;
      const from = idgate.requests.length;
      const first = await kubectl(binary, path, ['get', '--raw', '/api'], githubJob());
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      expect(JSON.parse(first.stdout).kind).toBe('APIVersions');
      expect(prod.users.at(-1)).toMatchObject({ username: `ci:${REPOSITORY}` });
      expect(prod.users.at(-1)?.groups).toContain('ci-deployers');
      // the default audience asked of GitHub is the trust's, `idgate`
      expect(github.minted.slice(minted)).toEqual(['idgate']);
      expect(exchanges(from)).toHaveLength(1);

      // the next kubectl of the job: the cached credential, no request to GitHub nor idgate
      const again = await kubectl(binary, path, ['get', '--raw', '/api'], githubJob());
      expect(again.stderr).toBe('');
      expect(again.code).toBe(0);
      expect(github.minted.length).toBe(minted + 1);
      expect(exchanges(from)).toHaveLength(1);
      expect(prod.authenticated.at(-1)).toBe(`ci:${REPOSITORY}`);
    });
  }

  it('once the credential nears its expiry, a new token is asked of GitHub and exchanged', async () => {
    const binary = KUBECTLS[0] as string;
    const { path } = await kubeconfigFor('gha-expiry', []);
    const first = await kubectl(binary, path, ['get', '--raw', '/api'], githubJob());
    expect(first.code, first.stderr).toBe(0);
    const minted = github.minted.length;
    const from = idgate.requests.length;
    // no longer than GitHub's token had left (300 s): 280 s later less than 30 s are left
    const later = { IDGATE_KUBECTL_NOW: new Date(Date.now() + 280_000).toISOString() };
    const next = await kubectl(binary, path, ['get', '--raw', '/api'], { ...githubJob(), ...later });
    expect(next.code, next.stderr).toBe(0);
    expect(github.minted.length).toBe(minted + 1);
    expect(exchanges(from)).toHaveLength(1);
  });

  it('a job of a repository the trust does not allow is refused, its token never printed', async () => {
    const binary = KUBECTLS[0] as string;
    const { path, cacheDir } = await kubeconfigFor('gha-other', []);
    github.repository = 'acme/other';
    try {
      const direct = await runPlugin(
        ['get-token', '--exchange', '--issuer', idgate.issuer, '--cluster', 'prod', '--cache-dir', cacheDir],
        { env: { ...githubJob(), NODE_EXTRA_CA_CERTS: idgate.caFile } },
      );
      expect(direct.code).toBe(1);
      expect(direct.stdout).toBe('');
      expect(direct.stderr).toMatch(
        /^kubectl-idgate: https:\/\/127\.0\.0\.1:\d+\/oauth refused the request: .*invalid_grant/,
      );
      expect(direct.stderr).toContain('condition');
      expect(direct.stderr).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/);
      expect(direct.stderr).not.toContain(REQUEST_TOKEN);
      const viaKubectl = await kubectl(binary, path, ['get', '--raw', '/api'], githubJob());
      expect(viaKubectl.code).not.toBe(0);
    } finally {
      github.repository = REPOSITORY;
    }
  });
});

describe('get-token --exchange with a token file or variable', () => {
  it('a projected service-account token file is exchanged once, then served from the cache', async () => {
    const home = join(dir, 'sa');
    await mkdir(home, { recursive: true });
    const tokenFile = join(home, 'token');
    await writeFile(tokenFile, `${await serviceAccountToken()}\n`);
    const args = [
      ...['get-token', '--exchange', '--issuer', idgate.issuer, '--audience', 'kubernetes:prod'],
      ...['--token-file', tokenFile, '--cache-dir', join(home, 'cache')],
    ];
    const env = { NODE_EXTRA_CA_CERTS: idgate.caFile };
    const from = idgate.requests.length;
    const first = await runPlugin(args, { env });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const credential = JSON.parse(first.stdout);
    expect(credential).toMatchObject({
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      kind: 'ExecCredential',
    });
    const expiry = Date.parse(credential.status.expirationTimestamp);
    expect(expiry - Date.now()).toBeGreaterThan(250_000);
    expect(expiry - Date.now()).toBeLessThanOrEqual(300_000);
    expect(await getApi(credential.status.token)).toBe(200);
    expect(prod.authenticated.at(-1)).toBe('cluster-a:system:serviceaccount:deploy:deployer');

    // the same file again: its jti is spent at idgate, so only the cache can answer
    const second = await runPlugin(args, { env });
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).status.token).toBe(credential.status.token);
    expect(exchanges(from)).toHaveLength(1);

    // the kubelet rotated the file: the same workload, still served from the cache
    await writeFile(tokenFile, await serviceAccountToken());
    const rotated = await runPlugin(args, { env });
    expect(JSON.parse(rotated.stdout).status.token).toBe(credential.status.token);
    expect(exchanges(from)).toHaveLength(1);

    // near expiry: the rotated token is exchanged
    const later = { ...env, IDGATE_KUBECTL_NOW: new Date(Date.now() + 280_000).toISOString() };
    const renewed = await runPlugin(args, { env: later });
    expect(renewed.code, renewed.stderr).toBe(0);
    expect(JSON.parse(renewed.stdout).status.token).not.toBe(credential.status.token);
    expect(exchanges(from)).toHaveLength(2);

    // logout clears it (there is nothing to revoke): the next run exchanges the file's token again
    const out = await runPlugin(['logout', '--cluster', 'prod', '--cache-dir', join(home, 'cache')]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain('Signed out of');
    await writeFile(tokenFile, await serviceAccountToken());
    const after = await runPlugin(args, { env });
    expect(after.code, after.stderr).toBe(0);
    expect(exchanges(from)).toHaveLength(3);
  });

  it('four plugins started together exchange the file once (its jti is single-use), all succeed', async () => {
    const home = join(dir, 'sa-together');
    await mkdir(home, { recursive: true });
    const tokenFile = join(home, 'token');
    await writeFile(tokenFile, await serviceAccountToken());
    const args = [
      ...['get-token', '--exchange', '--issuer', idgate.issuer, '--cluster', 'prod'],
      ...['--token-file', tokenFile, '--cache-dir', join(home, 'cache')],
    ];
    const from = idgate.requests.length;
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => runPlugin(args, { env: { NODE_EXTRA_CA_CERTS: idgate.caFile } })),
    );
    for (const run of runs) {
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
    }
    expect(new Set(runs.map((run) => JSON.parse(run.stdout).status.token)).size).toBe(1);
    expect(exchanges(from)).toHaveLength(1);
  });

  it('--token-env reads a GitLab-CI-style id_token variable', async () => {
    const home = join(dir, 'env');
    const token = await serviceAccountToken();
    const run = await runPlugin(
      [
        ...['get-token', '--exchange', '--issuer', idgate.issuer, '--cluster', 'prod'],
        ...['--token-env', 'IDGATE_ID_TOKEN', '--cache-dir', join(home, 'cache')],
      ],
      { env: { NODE_EXTRA_CA_CERTS: idgate.caFile, IDGATE_ID_TOKEN: token } },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(await getApi(JSON.parse(run.stdout).status.token)).toBe(200);
  });

  it('without a token source: a clear error, exit code 2, nothing on stdout', async () => {
    const run = await runPlugin([
      ...['get-token', '--exchange', '--issuer', idgate.issuer, '--cluster', 'prod'],
      ...['--cache-dir', join(dir, 'none')],
    ]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('--exchange found no token to exchange');
    expect(run.stderr).toContain('id-token: write');
    expect(run.stderr).toContain('--token-env');
    expect(run.stderr).toContain('--token-file');
  });

  it('only half of GitHub’s variables, a missing file, an empty variable, a token that is not a JWT', async () => {
    const base = ['get-token', '--exchange', '--issuer', idgate.issuer, '--cluster', 'prod'];
    const cache = ['--cache-dir', join(dir, 'errors')];
    const half = await runPlugin([...base, ...cache], {
      env: { ACTIONS_ID_TOKEN_REQUEST_URL: github.requestUrl },
    });
    expect(half.code).toBe(2);
    expect(half.stderr).toContain('needs ACTIONS_ID_TOKEN_REQUEST_TOKEN too');

    const missing = await runPlugin([...base, '--token-file', join(dir, 'no-such-token'), ...cache]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`cannot read the token file ${join(dir, 'no-such-token')}: ENOENT`);

    const empty = await runPlugin([...base, '--token-env', 'IDGATE_ID_TOKEN', ...cache]);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('the variable IDGATE_ID_TOKEN is not set or empty');

    const notJwt = await runPlugin([...base, '--token-env', 'IDGATE_ID_TOKEN', ...cache], {
      env: { IDGATE_ID_TOKEN: 'secret-not-a-jwt' },
    });
    expect(notJwt.code).toBe(1);
    expect(notJwt.stderr).toContain('the token in IDGATE_ID_TOKEN is not a JWT');
    expect(notJwt.stderr).not.toContain('secret-not-a-jwt');

    const badRequest = await runPlugin([...base, ...cache], {
      env: {
        ACTIONS_ID_TOKEN_REQUEST_URL: github.requestUrl,
        ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'wrong-request-token',
      },
    });
    expect(badRequest.code).toBe(1);
    expect(badRequest.stderr).toContain("GitHub Actions' token request");
    expect(badRequest.stderr).toContain('answered 401');
    expect(badRequest.stderr).not.toContain('wrong-request-token');
  });

  it('get-token --help documents --exchange and its sources', async () => {
    const help = await runPlugin(['get-token', '--help']);
    expect(help.code).toBe(0);
    for (const option of ['--exchange', '--exchange-audience', '--token-env', '--token-file'])
      expect(help.stdout).toContain(option);
    expect(help.stdout).toContain('ACTIONS_ID_TOKEN_REQUEST_URL');
  });

  it('flags of a sign-in do not go with --exchange', async () => {
    const run = await runPlugin([
      ...['get-token', '--exchange', '--issuer', idgate.issuer, '--cluster', 'prod', '--client-id', 'x'],
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--client-id does not go with --exchange');
    const two = await runPlugin([
      ...['get-token', '--exchange', '--issuer', idgate.issuer, '--cluster', 'prod'],
      ...['--token-env', 'A', '--token-file', '/x'],
    ]);
    expect(two.code).toBe(2);
    expect(two.stderr).toContain('pass one of --token-env, --token-file');
    const notIdgate = await runPlugin([
      ...['get-token', '--exchange', '--issuer', 'https://accounts.example.com', '--cluster', 'prod'],
    ]);
    expect(notIdgate.code).toBe(2);
    expect(notIdgate.stderr).toContain("--exchange needs idgate's issuer, {base URL}/oauth");
  });
});
