import { chmod, readFile, stat, watch, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ExecCredential } from '@idgate/schema';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { startOidcProviderIssuer, type TestIssuer } from './helpers/issuer.js';
import { runPlugin, tempDir, urlIn } from './helpers/plugin.js';
import { portForAChild, refusingPort } from './helpers/ports.js';

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
  idp.requests.length = 0;
  idp.grants.length = 0;
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
  ...extra,
];

/** The authorization URL the plugin printed. */
function authorizationUrl(stderr: string): URL {
  const line = stderr.split('\n').find((l) => l.includes('code_challenge='));
  return new URL(urlIn(line ?? '') ?? 'http://missing.invalid');
}

/** Runs get-token with the device flow, approving (or denying) on the provider's page when the URL is printed. */
function deviceSignIn(cluster: string, options: { deny?: boolean; env?: Record<string, string> } = {}) {
  let approval: Promise<void> | undefined;
  const run = runPlugin(getToken(cluster, ['--device']), {
    ...(options.env ? { env: options.env } : {}),
    onStderrLine: (line) => {
      const url = urlIn(line);
      if (url?.includes('user_code=') && approval === undefined) {
        approval = idp.approveDevice(url, { deny: options.deny === true });
      }
    },
  });
  return run.then(async (result) => {
    await approval;
    return result;
  });
}

describe('RFC 8628 device sign-in', () => {
  it('prints the verification URL and user code on stderr and only the ExecCredential on stdout', async () => {
    const result = await deviceSignIn('alpha');
    expect(result.stderr).toMatch(/user_code=/);
    expect(result.stderr).toMatch(/code [A-Z]{4}-?[A-Z]{4}/);
    expect(result.code).toBe(0);
    const credential = ExecCredential.parse(JSON.parse(result.stdout));
    expect(credential.apiVersion).toBe('client.authentication.k8s.io/v1beta1');
    const claims = decodeJwt(credential.status.token);
    expect(claims.aud).toBe('kubernetes:alpha');
    expect(claims.sub).toBe('alice');
    expect(Date.parse(credential.status.expirationTimestamp ?? '')).toBeGreaterThan(Date.now());
    expect(result.stderr).not.toContain(credential.status.token);
    expect(idp.grants).toEqual(expect.arrayContaining(['urn:ietf:params:oauth:grant-type:device_code']));
  });

  it('answers in client.authentication.k8s.io/v1 when kubectl asks in v1', async () => {
    const result = await deviceSignIn('alpha', {
      env: {
        KUBERNETES_EXEC_INFO: JSON.stringify({
          apiVersion: 'client.authentication.k8s.io/v1',
          kind: 'ExecCredential',
          spec: { interactive: true },
        }),
      },
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).apiVersion).toBe('client.authentication.k8s.io/v1');
  });

  it('uses the device flow when kubectl says nobody is there (spec.interactive: false), even with a display', async () => {
    let approval: Promise<void> | undefined;
    const result = await runPlugin(getToken('alpha'), {
      env: {
        DISPLAY: ':0',
        KUBERNETES_EXEC_INFO: JSON.stringify({
          apiVersion: 'client.authentication.k8s.io/v1',
          kind: 'ExecCredential',
          spec: { interactive: false },
        }),
      },
      onStderrLine: (line) => {
        const url = urlIn(line);
        if (url?.includes('user_code=') && approval === undefined) approval = idp.approveDevice(url);
      },
    });
    await approval;
    expect(result.stderr).not.toContain('code_challenge=');
    expect(result.code).toBe(0);
    expect(idp.grants).toContain('urn:ietf:params:oauth:grant-type:device_code');
  });

  it('fails in one line when the person denies', async () => {
    const result = await deviceSignIn('alpha', { deny: true });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n').at(-1)).toBe(
      'kubectl-idgate: the sign-in was denied (access_denied)',
    );
  });

  it('keeps the cache private: 0600 files in a 0700 folder, tokens not in any message', async () => {
    const result = await deviceSignIn('alpha');
    expect(result.code).toBe(0);
    expect((await stat(cacheDir)).mode & 0o777).toBe(0o700);
    const { readdir } = await import('node:fs/promises');
    const files = await readdir(cacheDir);
    expect(files.filter((f) => f.endsWith('.refresh.json'))).toHaveLength(1);
    expect(files.filter((f) => f.endsWith('.token.json'))).toHaveLength(1);
    for (const file of files) expect((await stat(`${cacheDir}/${file}`)).mode & 0o777).toBe(0o600);
    const refresh = JSON.parse(
      await readFile(`${cacheDir}/${files.find((f) => f.endsWith('.refresh.json'))}`, 'utf8'),
    );
    expect(result.stderr).not.toContain(refresh.refreshToken);
  });
});

describe('RFC 8252 loopback sign-in', () => {
  it('with --no-browser prints the URL; following it completes the sign-in on a random loopback port', async () => {
    let followed: Promise<Response> | undefined;
    const result = await runPlugin(getToken('alpha', ['--no-browser']), {
      onStderrLine: (line) => {
        const url = urlIn(line);
        if (url?.includes('code_challenge=') && followed === undefined)
          followed = idp.followAuthorization(url);
      },
    });
    expect(result.code).toBe(0);
    const page = await followed;
    expect(page?.status).toBe(200);
    expect(await page?.text()).toContain('You are signed in');
    const authorize = authorizationUrl(result.stderr);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('resource')).toBe('kubernetes:alpha');
    expect(authorize.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(decodeJwt(JSON.parse(result.stdout).status.token).aud).toBe('kubernetes:alpha');
    expect(idp.grants).toEqual(['authorization_code']);
  });

  it('opens the browser BROWSER names, trying its commands in turn, even on a host without a display', async () => {
    const dir = await tempDir('browser');
    const opened = join(dir, 'opened-url');
    // a browser that records what it was asked to open (written whole, then renamed into place)
    const browser = join(dir, 'browser');
    await writeFile(
      browser,
      `#!/bin/sh\nprintf '%s' "$2" > "${opened}.tmp" && mv "${opened}.tmp" "${opened}"\n`,
    );
    await chmod(browser, 0o755);
    const stop = new AbortController();
    onTestFinished(() => stop.abort());
    // follows the URL the browser got once it has it, as the person in front of it would
    const followed = (async () => {
      for await (const event of watch(dir, { signal: stop.signal }))
        if (event.filename === 'opened-url') return idp.followAuthorization(await readFile(opened, 'utf8'));
      return undefined;
    })().catch(() => undefined);
    const result = await runPlugin(getToken('alpha'), {
      // no DISPLAY; the first command does not exist; the second gets the URL where %s stands
      env: { BROWSER: `${join(dir, 'no-such-browser')}:${browser} --new-window %s` },
    });
    expect(result.stderr).not.toContain('user_code=');
    expect(result.code).toBe(0);
    expect((await followed)?.status).toBe(200);
    expect(await readFile(opened, 'utf8')).toBe(authorizationUrl(result.stderr).href);
    expect(idp.grants).toEqual(['authorization_code']);
  });

  it('fails in one line when the browser never comes back (timeout)', async () => {
    const result = await runPlugin(getToken('alpha', ['--no-browser', '--timeout', '1']));
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n').at(-1)).toBe(
      'kubectl-idgate: the sign-in was not completed within 1 s (was the browser closed?)',
    );
  });

  it('fails in one line when the person refuses in the browser', async () => {
    idp.nextAccount = null;
    let followed: Promise<Response> | undefined;
    const result = await runPlugin(getToken('alpha', ['--no-browser']), {
      onStderrLine: (line) => {
        const url = urlIn(line);
        if (url?.includes('code_challenge=') && followed === undefined)
          followed = idp.followAuthorization(url);
      },
    });
    await followed;
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n').at(-1)).toBe(
      'kubectl-idgate: the sign-in was denied (access_denied)',
    );
  });

  it('uses --listen-address when given', async () => {
    const port = await portForAChild();
    let followed: Promise<Response> | undefined;
    const result = await runPlugin(
      getToken('alpha', ['--no-browser', '--listen-address', `127.0.0.1:${port}`]),
      {
        onStderrLine: (line) => {
          const url = urlIn(line);
          if (url?.includes('code_challenge=') && followed === undefined)
            followed = idp.followAuthorization(url);
        },
      },
    );
    await followed;
    expect(result.code).toBe(0);
    expect(authorizationUrl(result.stderr).searchParams.get('redirect_uri')).toBe(
      `http://127.0.0.1:${port}/callback`,
    );
  });
});

describe('failures are one line on stderr', () => {
  it('an unreachable issuer', async () => {
    const port = await refusingPort();
    const result = await runPlugin([
      'get-token',
      '--issuer',
      `http://127.0.0.1:${port}`,
      '--client-id',
      'kubectl',
      '--cluster',
      'a',
      '--cache-dir',
      cacheDir,
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(`kubectl-idgate: cannot reach the issuer http://127.0.0.1:${port}: ECONNREFUSED`);
  });

  it('a cache it cannot read', async () => {
    const first = await deviceSignIn('alpha');
    expect(first.code).toBe(0);
    const { readdir, writeFile } = await import('node:fs/promises');
    const file = (await readdir(cacheDir)).find((f) => f.endsWith('.token.json'));
    await writeFile(`${cacheDir}/${file}`, '{ not json');
    const result = await runPlugin(getToken('alpha'));
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      `kubectl-idgate: the token cache file ${cacheDir}/${file} is not valid: remove it, or run kubectl-idgate logout`,
    );
  });
});
