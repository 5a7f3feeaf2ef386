import { spawn } from 'node:child_process';
import { chmod, readdir, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endsWithTest } from '../../server/test/helpers/child-processes.js';
import { type IdgateIssuer, type Person, startIdgate } from './helpers/idgate.js';
import { type StubApiServer, startStubApiServer } from './helpers/kube-apiserver.js';
import { webhookAuthenticator } from './helpers/kube-authn.js';
import { KUBECTL } from './helpers/kubectl.js';
import { PLUGIN_BIN, type PluginRun, runPlugin, tempDir, urlIn } from './helpers/plugin.js';

/**
 * Step-up against idgate itself (issue 25): a cluster starts requiring a second factor while a
 * password-only sign-in is cached; idgate refuses its refresh, kubectl-idgate signs in again once
 * with acr_values=urn:idgate:acr:mfa (device flow; the person enrols an authenticator app on the
 * spot, codes by otplib), and the new token passes the TokenReview of the cluster's bound key.
 */

const MFA = 'urn:idgate:acr:mfa';
const SINGLE = 'urn:idgate:acr:sf';
const PASSWORD = 'battery-staple-0a7d31';

/** A person who enrols an authenticator app when asked (the key shown on the page) and answers its codes. */
function withAuthenticator(username: string): Person & { secret: () => string } {
  let secret = '';
  return {
    username,
    password: PASSWORD,
    secret: () => secret,
    secondFactor: (page) => {
      const shown = /<code id="totp-secret">([^<]+)<\/code>/.exec(page)?.[1];
      if (shown !== undefined) secret = shown.replaceAll(' ', '');
      return generateSync({ secret });
    },
  };
}

const claims = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;

let idgate: IdgateIssuer;
let dir: string;
let clientId: string;
const stubs: Record<string, StubApiServer> = {};

async function idgateCli(args: string[], input?: string): Promise<string> {
  const result = await idgate.cli(args, input);
  if (result.code !== 0) throw new Error(`idgate ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
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

/** The plugin's clock past the access tokens' lifetime (it trusts the cache while > 30 s remain). */
const later = () => ({
  IDGATE_KUBECTL_NOW: new Date(Date.now() + (idgate.accessTokenTtl + 60) * 1000).toISOString(),
});

beforeAll(async () => {
  dir = await tempDir('stepup');
  idgate = await startIdgate({ dir, accessTokenTtl: 600 });
  await idgateCli(['init', '--json']);
  for (const name of ['alice', 'bob'])
    await idgateCli(['users', 'add', name, '--password-stdin'], `${PASSWORD}\n`);
  for (const cluster of ['prod', 'stage']) {
    const added = JSON.parse(await idgateCli(['clusters', 'add', cluster, '--json']));
    clientId = added.cluster.kubectlClientId;
    const webhook = await idgateCli([
      ...['clusters', 'show', cluster, '--webhook-kubeconfig'],
      ...['--certificate-authority', idgate.caFile],
    ]);
    stubs[cluster] = await startStubApiServer({
      issuer: idgate.issuer,
      audience: `kubernetes:${cluster}`,
      dir,
      authenticate: webhookAuthenticator(webhook, [`kubernetes:${cluster}`]),
    });
  }
});

afterAll(async () => {
  for (const stub of Object.values(stubs)) await stub.stop();
  await idgate?.stop();
});

describe('kubectl-idgate meets a cluster that starts requiring a second factor', () => {
  it('signs in again once with acr_values, and the new token passes the TokenReview of the bound key', async () => {
    const cacheDir = join(dir, 'cache-alice');
    const alice = withAuthenticator('alice');
    const getToken = (env: Record<string, string> = {}, cluster = 'prod') => {
      let approval: Promise<unknown> | undefined;
      return runPlugin(
        [
          ...['get-token', '--issuer', idgate.issuer, '--client-id', clientId, '--cluster', cluster],
          ...['--cache-dir', cacheDir, '--device'],
        ],
        {
          env: { NODE_EXTRA_CA_CERTS: idgate.caFile, ...env },
          onStderrLine: (line) => {
            const url = urlIn(line);
            if (url?.includes('user_code=') && approval === undefined)
              approval = idgate.approveDevice(url, alice);
          },
        },
      ).then(async (run) => {
        await approval;
        return run;
      });
    };
    const tokenOf = (run: PluginRun) => JSON.parse(run.stdout).status.token as string;

    // both clusters set up: one sign-in covers them
    for (const cluster of ['prod', 'stage']) {
      const setup = await runPlugin([
        ...['setup', '--issuer', idgate.issuer, '--client-id', clientId, '--cluster', cluster],
        ...['--server', (stubs[cluster] as StubApiServer).url, '--kubeconfig', join(dir, 'config-alice')],
        ...['--cache-dir', cacheDir],
      ]);
      expect(setup.code, setup.stderr).toBe(0);
    }
    // a password-only sign-in while prod asks for no second factor
    const first = await getToken();
    expect(first.code, first.stderr).toBe(0);
    const passwordOnly = tokenOf(first);
    expect(claims(passwordOnly).acr).toBe(SINGLE);
    expect(alice.secret()).toBe('');
    expect(await getApi(stubs.prod as StubApiServer, passwordOnly)).toBe(200);
    const stageFirst = await getToken({}, 'stage');
    expect(stageFirst.code, stageFirst.stderr).toBe(0);
    expect(claims(tokenOf(stageFirst)).acr).toBe(SINGLE);

    await idgateCli(['clusters', 'update', 'prod', '--require-mfa']);
    // the bound key's TokenReview refuses it once the server has read the change (every second on SQLite)
    await expect
      .poll(() => getApi(stubs.prod as StubApiServer, passwordOnly), { timeout: 5_000, interval: 100 })
      .toBe(401);

    idgate.requests.length = 0;
    const stepped = await getToken(later());
    expect(stepped.code, stepped.stderr).toBe(0);
    expect(stepped.stderr).toContain(
      `kubernetes:prod requires a sign-in with a second factor (acr ${MFA}): signing in again with acr_values=${MFA}.`,
    );
    const asked = idgate.requests.filter(
      (r) => r.line.startsWith('POST') && r.line !== 'POST /oauth/authenticate',
    );
    expect(asked[0]).toMatchObject({ line: 'POST /oauth/token', grantType: 'refresh_token' });
    // one sign-in, with acr_values; then the refused grant is revoked
    expect(asked.filter((r) => r.line === 'POST /oauth/device_authorization')).toEqual([
      expect.objectContaining({ acrValues: MFA, resource: 'kubernetes:prod,kubernetes:stage' }),
    ]);
    expect(asked.at(-1)?.line).toBe('POST /oauth/revoke');
    expect(alice.secret()).toMatch(/^[A-Z2-7]{32}$/);
    const withMfa = tokenOf(stepped);
    expect(claims(withMfa)).toMatchObject({ aud: 'kubernetes:prod', acr: MFA });
    expect(await getApi(stubs.prod as StubApiServer, withMfa)).toBe(200);
    expect(stubs.prod?.users.at(-1)?.username).toBe('alice');
    // stage's cached token came from the sign-in without it: renewed from the new one, acr and all
    idgate.requests.length = 0;
    const stage = await getToken({}, 'stage');
    expect(stage.code, stage.stderr).toBe(0);
    expect(claims(tokenOf(stage))).toMatchObject({ aud: 'kubernetes:stage', acr: MFA });
    expect(idgate.requests.filter((r) => r.line === 'POST /oauth/token')).toEqual([
      expect.objectContaining({ grantType: 'refresh_token', resource: 'kubernetes:stage' }),
    ]);

    // A cached token without the second factor is not handed out for prod any more, however fresh:
    // the plugin renews it from the new sign-in instead.
    let file = '';
    let entry: Record<string, unknown> = {};
    for (const name of (await readdir(cacheDir)).filter((n) => n.endsWith('.token.json'))) {
      const read = JSON.parse(await readFile(join(cacheDir, name), 'utf8'));
      if (read.audience === 'kubernetes:prod') [file, entry] = [name, read];
    }
    await writeFile(
      join(cacheDir, file),
      JSON.stringify({ ...entry, accessToken: passwordOnly, acr: SINGLE, expiresAt: Date.now() + 3_600_000 }),
    );
    idgate.requests.length = 0;
    const renewed = await getToken();
    expect(renewed.code, renewed.stderr).toBe(0);
    expect(renewed.stderr).toBe('');
    expect(tokenOf(renewed)).not.toBe(passwordOnly);
    expect(claims(tokenOf(renewed)).acr).toBe(MFA);
    expect(idgate.requests.filter((r) => r.line === 'POST /oauth/token')).toEqual([
      expect.objectContaining({ grantType: 'refresh_token', resource: 'kubernetes:prod' }),
    ]);
  });

  it.skipIf(KUBECTL === undefined)(
    'kubectl itself: the exec plugin steps up and the command works',
    async () => {
      const bob = withAuthenticator('bob');
      const kubeconfig = join(dir, 'config-bob');
      const cacheDir = join(dir, 'cache-bob');
      const command = join(dir, 'kubectl-idgate');
      await writeFile(command, `#!/bin/sh\nexec "${process.execPath}" "${PLUGIN_BIN}" "$@"\n`);
      await chmod(command, 0o755);
      const stage = stubs.stage as StubApiServer;
      const setup = await runPlugin([
        ...['setup', '--issuer', idgate.issuer, '--client-id', clientId, '--cluster', 'stage'],
        ...['--server', stage.url, '--certificate-authority', stage.caFile, '--kubeconfig', kubeconfig],
        ...['--command', command, '--cache-dir', cacheDir],
      ]);
      expect(setup.code, setup.stderr).toBe(0);
      const kubectl = (env: Record<string, string> = {}) =>
        new Promise<PluginRun>((resolve, reject) => {
          const child = endsWithTest(
            spawn(KUBECTL as string, ['--kubeconfig', kubeconfig, 'get', '--raw', '/api'], {
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
            if (url !== undefined && approval === undefined) approval = idgate.approveDevice(url, bob);
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

      const first = await kubectl();
      expect(first.code, first.stderr).toBe(0);
      expect(bob.secret()).toBe('');
      await idgateCli(['clusters', 'update', 'stage', '--require-mfa']);
      // the change reaches the token endpoint within a second on SQLite: wait for the review to see it
      const cached = (await readdir(cacheDir)).find((name) => name.endsWith('.token.json')) as string;
      const before = JSON.parse(await readFile(join(cacheDir, cached), 'utf8')).accessToken as string;
      await expect.poll(() => getApi(stage, before), { timeout: 5_000, interval: 100 }).toBe(401);

      const stepped = await kubectl(later());
      expect(stepped.code, stepped.stderr).toBe(0);
      expect(JSON.parse(stepped.stdout).kind).toBe('APIVersions');
      expect(stepped.stderr).toContain(`signing in again with acr_values=${MFA}`);
      expect(bob.secret()).toMatch(/^[A-Z2-7]{32}$/);
      expect(stage.users.at(-1)?.username).toBe('bob');
    },
  );
});
