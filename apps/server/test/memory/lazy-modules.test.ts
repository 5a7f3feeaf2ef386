import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startServeProcess, within } from '../helpers/serve-process.js';
import { freePort } from '../helpers/server.js';

const RECORDER = pathToFileURL(join(import.meta.dirname, 'fixtures', 'record-modules.mjs')).href;
/** Packages a server on its embedded SQLite default never needs: loaded only when used. */
const LAZY = ['pg', 'ldapts', 'yaml'];
const packageOf = (url: string) =>
  /\/node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*\/node_modules\/)/.exec(url)?.[1];

// Idle memory is part of what the server promises (under 100 MB for `pnpm start`): the PostgreSQL
// driver, the LDAP client and the YAML parser cost memory a SQLite server without LDAP providers
// or a config file does not need, so they are imported where they are used, not at start.
describe('what `idgate serve` loads on its SQLite default', () => {
  it('imports neither the PostgreSQL driver, nor the LDAP client, nor the YAML parser', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'idgate-lazy-'));
    const modules = join(dir, 'modules.txt');
    const port = await freePort();
    const server = await startServeProcess(
      {
        PATH: process.env.PATH,
        NODE_OPTIONS: `--import=${RECORDER}`,
        IDGATE_TEST_MODULES_FILE: modules,
        IDGATE_DATABASE_URL: `sqlite:${join(dir, 'idgate.db')}`,
        IDGATE_SECRET: 'lazy-modules-test-secret-0123456789abcdef',
        IDGATE_ISSUER: `http://127.0.0.1:${port}/oauth`,
        IDGATE_HOST: '127.0.0.1',
        IDGATE_LOG_LEVEL: 'warn',
      },
      port,
    );
    try {
      // A request through the routes that serve most traffic, and the discovery document.
      expect((await fetch(`${server.url}/oauth/.well-known/openid-configuration`)).status).toBe(200);
      const review = await fetch(`${server.url}/oauth/authenticate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(review.status).toBe(401);
      // The recorder reports from the loader thread: the server's own packages show it works.
      const loaded = async () => new Set(readFileSync(modules, 'utf8').split('\n').map(packageOf));
      await within(
        5000,
        async () => (await loaded()).has('fastify') && (await loaded()).has('better-sqlite3'),
      );
      const packages = await loaded();
      expect(LAZY.filter((name) => packages.has(name))).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
