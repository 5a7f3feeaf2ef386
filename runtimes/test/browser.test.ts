import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type OutputFile } from 'esbuild';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CannedIdgate, startCannedIdgate } from './idgate-api.js';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const CHROMIUM = process.env.IDGATE_CHROMIUM ?? '/usr/bin/chromium';
// On CI a missing browser is a failure (.ci/run installs it); elsewhere the test says why it skips.
const chromiumAvailable = existsSync(CHROMIUM) || Boolean(process.env.CI);
const NODE_GLOBALS = ['process', 'Buffer', 'global', '__dirname', '__filename', 'setImmediate'];
// A free reference to a Node global becomes this marker in the bundle (esbuild's `define` replaces
// only identifiers that are not declared in scope), so the test can tell where one was.
const MARKER = '__NODE_GLOBAL__';

/**
 * The programs bundled as a browser would load them: esbuild, platform browser, nothing external.
 * `marked`: each free reference to a Node global replaced by the marker, to find them.
 */
async function bundleForBrowsers(marked = false): Promise<{ core: OutputFile; sdk: OutputFile }> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: { core: 'programs/core.js', sdk: 'programs/sdk.js' },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    outdir: 'out',
    logLevel: 'silent',
    ...(marked
      ? { define: Object.fromEntries(NODE_GLOBALS.map((name) => [name, `${MARKER}.${name}`])) }
      : {}),
  });
  const output = (name: string) => {
    const file = result.outputFiles.find((f) => f.path.endsWith(`${name}.js`));
    if (file === undefined) throw new Error(`no ${name}.js in the bundle`);
    return file;
  };
  return { core: output('core'), sdk: output('sdk') };
}

/**
 * The modules of an esbuild bundle (its `// path` comments) that refer to a Node global they do not
 * first feature-detect (`typeof Buffer !== "undefined"`, as a library that also runs in browsers does).
 */
function modulesUsingNodeGlobals(bundle: string): string[] {
  const modules = bundle.split(/^\/\/ (?=\S+\.(?:js|mjs|cjs)$)/m);
  const used = (text: string, pattern: RegExp) => new Set([...text.matchAll(pattern)].map((m) => m[1]));
  return modules
    .filter((text) => {
      const names = used(text, new RegExp(`${MARKER}\\.(\\w+)`, 'g'));
      const detected = used(text, new RegExp(`typeof ${MARKER}\\.(\\w+) !== ["']undefined["']`, 'g'));
      return [...names].some((name) => !detected.has(name));
    })
    .map((text) => text.split('\n')[0] ?? '');
}

describe('core and the SDK in browsers', () => {
  it('bundle for the browser platform with no node: import and no Node global, dependencies included', async () => {
    // A `node:` import (or any Node built-in) fails the build on the browser platform.
    const { core, sdk } = await bundleForBrowsers(true);
    for (const bundle of [core.text, sdk.text]) {
      expect(bundle).toMatch(/packages\/(core|sdk|schema)\/dist\//);
      expect(modulesUsingNodeGlobals(bundle)).toEqual([]);
    }
  });

  describe.skipIf(!chromiumAvailable)('in Chromium', () => {
    let browser: Browser;
    let api: CannedIdgate;
    beforeAll(async () => {
      const { core, sdk } = await bundleForBrowsers();
      const script = (text: string) => ({ type: 'text/javascript', body: text });
      const page = (name: string) => ({
        type: 'text/html',
        body: `<!doctype html><title>${name}</title><script type="module" src="/${name}.js"></script>`,
      });
      // Served from the API's origin: a loopback page is a secure context (Web Crypto), and the SDK's
      // requests are same-origin.
      api = await startCannedIdgate({
        '/core.js': script(core.text),
        '/sdk.js': script(sdk.text),
        '/core.html': page('core'),
        '/sdk.html': page('sdk'),
      });
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
      });
    });
    afterAll(async () => {
      await browser?.close();
      await api?.close();
    });

    async function runInPage(name: string): Promise<string> {
      const page = await browser.newPage();
      try {
        const said = new Promise<string>((resolve) => {
          page.on('console', (message) => {
            if (/^(OK|FAIL) /.test(message.text())) resolve(message.text());
          });
          page.on('pageerror', (error) => resolve(`FAIL ${name}: ${error.message}`));
        });
        await page.goto(`${api.baseUrl}/${name}.html`);
        return await said;
      } finally {
        await page.close();
      }
    }

    it('runs the core program: a token issued, verified, reviewed and a tampered one refused', async () => {
      expect(await runInPage('core')).toBe('OK core on a browser');
    });

    it('runs the SDK program against the API', async () => {
      expect(await runInPage('sdk')).toBe('OK sdk on a browser');
    });
  });
});
