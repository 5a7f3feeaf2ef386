import { createServer } from 'node:net';
import type { Clock } from '@idgate/core';
import type { IdgateConfigInput } from '../../src/config.js';
import { type RunningServer, startServer } from '../../src/serve.js';
import type { TestDatabaseKind } from './databases.js';
import { startHarness, type TestHarness } from './harness.js';

export { TEST_SECRET, testClock } from './harness.js';

/** A free TCP port on 127.0.0.1 (the issuer must name the port before the server listens). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/**
 * A real idgate listening on loopback, its database, and everything its logs said: for flows that
 * cross processes (real HTTP clients, a browser, the CLI). Route tests use `startTestApp`.
 */
export interface TestServer extends TestHarness {
  server: RunningServer;
  /** `http://127.0.0.1:<port>` (or `http://localhost:<port>`) */
  baseUrl: string;
}

export async function startTestServer(
  kind: TestDatabaseKind,
  overrides: IdgateConfigInput = {},
  options: { clock?: Clock; hostname?: 'localhost' } = {},
): Promise<TestServer> {
  const port = await freePort();
  // WebAuthn refuses IP literals as RP IDs: a passkey test names the issuer `localhost`.
  const { hostname = '127.0.0.1', ...rest } = options;
  const baseUrl = `http://${hostname}:${port}`;
  const harness = await startHarness(
    kind,
    { issuer: `${baseUrl}/oauth`, overrides: { host: '127.0.0.1', port, ...overrides }, ...rest },
    (config, composeOptions) => startServer(config, composeOptions),
  );
  return { ...harness, baseUrl };
}
