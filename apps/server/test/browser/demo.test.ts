import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { descendants, endsWithTest, killTree } from '../helpers/child-processes.js';
import { freePort } from '../helpers/server.js';
import { toolPath } from '../helpers/tools.js';

const CHROMIUM = toolPath('chromium');
const DEMO = fileURLToPath(new URL('../../../../scripts/demo.mjs', import.meta.url));

/** `pnpm demo` (without its build step: the suite runs on built JavaScript), until it says it runs. */
async function startDemo(env: Record<string, string>): Promise<{ child: ChildProcess; output: string }> {
  const child = endsWithTest(
    spawn(process.execPath, [DEMO, '--no-build'], { env: { ...process.env, ...env }, stdio: 'pipe' }),
  );
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ctrl-C stops both.')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`pnpm demo exited with ${code}:\n${output}`)));
  });
  return { child, output };
}

describe.skipIf(CHROMIUM === undefined)('pnpm demo: a newcomer signs in to the example application', () => {
  let browser: Browser;
  let dataDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'idgate-demo-'));
    env = {
      DEMO_DATA_DIR: dataDir,
      IDGATE_PORT: String(await freePort()),
      DEMO_APP_PORT: String(await freePort()),
    };
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints what to open, and the person signed in sees their claims and what Kubernetes sees', async () => {
    const { child, output } = await startDemo(env);
    const appUrl = `http://localhost:${env.DEMO_APP_PORT}`;
    const credentials = /Open (\S+) and sign in as (\S+), password (\S+)/.exec(output);
    expect(credentials?.slice(1, 3)).toEqual([appUrl, 'demo']);
    const password = credentials?.[3] as string;
    expect(output).toContain(`http://localhost:${env.IDGATE_PORT}/oauth/.well-known/openid-configuration`);
    // The settings file holds secrets: only its owner reads it.
    expect(statSync(join(dataDir, 'app.env')).mode & 0o777).toBe(0o600);

    const page = await (await browser.newContext()).newPage();
    await page.goto(appUrl);
    await page.getByRole('link', { name: 'Sign in with idgate' }).click();
    await page.getByLabel('Username').fill('demo');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.locator('#user').waitFor();
    expect(await page.locator('#user').textContent()).toBe('demo');
    const text = (await page.locator('body').textContent()) as string;
    // The ID token is for the application, the access token for the demo cluster, which accepts it.
    expect(text).toContain(`"iss": "http://localhost:${env.IDGATE_PORT}/oauth"`);
    expect(text).toContain('"aud": "kubernetes:demo"');
    const review = JSON.parse((await page.locator('#review').textContent()) as string);
    expect(review).toMatchObject({
      authenticated: true,
      user: { username: 'demo', groups: ['developers'] },
      audiences: ['kubernetes:demo'],
    });

    // Ctrl-C stops idgate and the application with it.
    const below = descendants(child.pid as number).map((entry) => entry.pid);
    expect(below).toHaveLength(2);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(below.filter((pid) => existsSync(`/proc/${pid}`))).toEqual([]);
  });

  it('starts again on the same data without a second init, with the same demo user', async () => {
    const before = readFileSync(join(dataDir, 'app.env'), 'utf8');
    const { child, output } = await startDemo(env);
    expect(output).toContain(`password ${/DEMO_PASSWORD=(\S+)/.exec(before)?.[1]}`);
    expect(readFileSync(join(dataDir, 'app.env'), 'utf8')).toBe(before);
    await killTree(child);
  });
});
