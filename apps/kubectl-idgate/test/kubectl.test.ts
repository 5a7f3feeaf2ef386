import { spawn } from 'node:child_process';
import { chmod, readdir, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { endsWithTest } from '../../server/test/helpers/child-processes.js';
import { startOidcProviderIssuer, type TestIssuer } from './helpers/issuer.js';
import { type StubApiServer, startStubApiServer } from './helpers/kube-apiserver.js';
import { KUBECTL } from './helpers/kubectl.js';
import { PLUGIN_BIN, runPlugin, tempDir, urlIn } from './helpers/plugin.js';

let idp: TestIssuer;
let alpha: StubApiServer;
let beta: StubApiServer;
let dir: string;
let kubeconfig: string;
let cacheDir: string;
let command: string;

beforeAll(async () => {
  dir = await tempDir('kubectl');
  idp = await startOidcProviderIssuer();
  alpha = await startStubApiServer({ issuer: idp.issuer, audience: 'kubernetes:alpha', dir });
  beta = await startStubApiServer({ issuer: idp.issuer, audience: 'kubernetes:beta', dir });
  kubeconfig = join(dir, 'config');
  cacheDir = join(dir, 'cache');
  // what `npm install -g @idgate/kubectl` puts on PATH
  command = join(dir, 'kubectl-idgate');
  await writeFile(command, `#!/bin/sh\nexec "${process.execPath}" "${PLUGIN_BIN}" "$@"\n`);
  await chmod(command, 0o755);
});
afterAll(async () => {
  await alpha?.stop();
  await beta?.stop();
  await idp?.stop();
});

/** Runs kubectl like a person on a headless host; approves the device sign-in when its URL is printed. */
function kubectl(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = endsWithTest(
      spawn(KUBECTL as string, ['--kubeconfig', kubeconfig, ...args], {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let stdout = '';
    let stderr = '';
    let approval: Promise<void> | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const url = stderr
        .split('\n')
        .map(urlIn)
        .find((u) => u?.includes('user_code='));
      if (url !== undefined && approval === undefined) approval = idp.approveDevice(url);
    });
    child.on('error', reject);
    child.on('close', async (code) => {
      await approval;
      resolve({ code, stdout, stderr });
    });
  });
}

/** GET /api of `server` with a bearer token, answering the status. */
function getApi(server: StubApiServer, token: string, ca: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}/api`, { ca, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe.skipIf(KUBECTL === undefined)('real kubectl through the exec credential plugin', () => {
  it('setup writes a kubeconfig that keeps its other entries', async () => {
    await writeFile(
      kubeconfig,
      [
        '# my clusters',
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: other',
        '  cluster: {server: "https://other.example:6443"}',
        'users:',
        '- name: other-admin',
        '  user: {token: keep-me}',
        'contexts:',
        '- name: other',
        '  context: {cluster: other, user: other-admin}',
        'current-context: other',
        '',
      ].join('\n'),
    );
    for (const [cluster, stub] of [
      ['alpha', alpha],
      ['beta', beta],
    ] as const) {
      const result = await runPlugin([
        'setup',
        '--issuer',
        idp.issuer,
        '--client-id',
        idp.clientId,
        '--cluster',
        cluster,
        '--server',
        stub.url,
        '--certificate-authority',
        stub.caFile,
        '--kubeconfig',
        kubeconfig,
        '--command',
        command,
        '--cache-dir',
        cacheDir,
      ]);
      expect(result.stderr).toContain(`context "${cluster}"`);
      expect(result.code).toBe(0);
    }
    const text = await readFile(kubeconfig, 'utf8');
    expect(text).toContain('# my clusters');
    const config = parse(text);
    expect(config.clusters.map((c: { name: string }) => c.name)).toEqual(['other', 'alpha', 'beta']);
    expect(config.users[0]).toEqual({ name: 'other-admin', user: { token: 'keep-me' } });
    expect(config['current-context']).toBe('beta');
    const exec = config.users[1].user.exec;
    expect(exec.apiVersion).toBe('client.authentication.k8s.io/v1beta1');
    expect(exec.interactiveMode).toBe('IfAvailable');
    expect(exec.args).toEqual([
      'get-token',
      '--issuer',
      idp.issuer,
      '--client-id',
      idp.clientId,
      '--cluster',
      'alpha',
      '--cache-dir',
      cacheDir,
    ]);
  });

  it('kubectl get --raw /api signs in on a headless host with the device flow and succeeds', async () => {
    const result = await kubectl(['--context', 'alpha', 'get', '--raw', '/api']);
    expect(result.stderr).toContain('user_code=');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).kind).toBe('APIVersions');
    expect(alpha.authenticated).toEqual(['alice']);
  });

  it('a second run makes no request to the issuer', async () => {
    idp.requests.length = 0;
    const result = await kubectl(['--context', 'alpha', 'get', '--raw', '/api']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(idp.requests).toEqual([]);
    expect(alpha.authenticated).toEqual(['alice', 'alice']);
  });

  it('a token for cluster alpha is refused by cluster beta', async () => {
    const file = (await readdir(cacheDir)).find((name) => name.endsWith('.token.json'));
    const { accessToken } = JSON.parse(await readFile(join(cacheDir, file ?? ''), 'utf8'));
    expect(await getApi(alpha, accessToken, await readFile(alpha.caFile, 'utf8'))).toBe(200);
    expect(await getApi(beta, accessToken, await readFile(beta.caFile, 'utf8'))).toBe(401);
  });

  it('after expiry the token is refreshed silently', async () => {
    idp.grants.length = 0;
    const expired = {
      IDGATE_KUBECTL_NOW: new Date(Date.now() + (idp.accessTokenTtl + 60) * 1000).toISOString(),
    };
    const result = await kubectl(['--context', 'alpha', 'get', '--raw', '/api'], expired);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(idp.grants).toEqual(['refresh_token']);
  });

  it('five kubectl processes started together after expiry all succeed, and the grant survives', async () => {
    idp.grants.length = 0;
    const expired = {
      IDGATE_KUBECTL_NOW: new Date(Date.now() + 3 * (idp.accessTokenTtl + 60) * 1000).toISOString(),
    };
    const results = await Promise.all(
      Array.from({ length: 5 }, () => kubectl(['--context', 'alpha', 'get', '--raw', '/api'], expired)),
    );
    for (const result of results) {
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    }
    expect(idp.grants).toEqual(['refresh_token']);
    const later = {
      IDGATE_KUBECTL_NOW: new Date(Date.now() + 5 * (idp.accessTokenTtl + 60) * 1000).toISOString(),
    };
    const next = await kubectl(['--context', 'alpha', 'get', '--raw', '/api'], later);
    expect(next.code).toBe(0);
    expect(idp.grants).toEqual(['refresh_token', 'refresh_token']);
  });

  it('after logout kubectl is asked to sign in again', async () => {
    const out = await runPlugin(['logout', '--cluster', 'alpha', '--cache-dir', cacheDir]);
    expect(out.code).toBe(0);
    const result = await kubectl(['--context', 'alpha', 'get', '--raw', '/api']);
    expect(result.stderr).toContain('user_code=');
    expect(result.code).toBe(0);
  });
});
