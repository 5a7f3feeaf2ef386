// The references, each its own process on 127.0.0.1: a bare fastify route answering idgate's own
// bytes, and node-oidc-provider 9 twice (opaque access tokens; RS256 JWT access tokens).
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { basic } from './idgate.mjs';
import { freePort, spawnNode, waitUntilReady } from './processes.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * @param {{ tmp: string, alg: string, cpuProfDir?: string,
 *   fixtures: { tokenReview: string, discovery: string, jwks: string } }} options
 */
export async function startReferences(options) {
  const fixtures = join(options.tmp, 'fixtures.json');
  writeFileSync(fixtures, JSON.stringify(options.fixtures));
  const barePort = await freePort();
  const bare = spawnNode(
    [
      ...(options.cpuProfDir === undefined
        ? []
        : ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}/bare`]),
      join(here, 'servers/bare.mjs'),
    ],
    {
      env: { ...process.env, NODE_ENV: 'production', BENCH_PORT: String(barePort), BENCH_FIXTURES: fixtures },
      logFile: join(options.tmp, 'bare.log'),
    },
  );
  const bareUrl = `http://127.0.0.1:${barePort}`;
  await waitUntilReady(`${bareUrl}/healthz`, bare, 'bare fastify route');

  /** @param {'opaque' | 'jwt'} format */
  const provider = async (format) => {
    const port = await freePort();
    const client = { id: 'bench-service', secret: randomBytes(32).toString('base64url') };
    const child = spawnNode([join(here, 'servers/oidc-provider.mjs')], {
      env: {
        ...process.env,
        NODE_ENV: 'production',
        BENCH_PORT: String(port),
        BENCH_ALG: options.alg,
        BENCH_CLIENT_ID: client.id,
        BENCH_CLIENT_SECRET: client.secret,
        BENCH_ACCESS_TOKEN_FORMAT: format,
      },
      logFile: join(options.tmp, `oidc-provider-${format}.log`),
    });
    const url = `http://127.0.0.1:${port}`;
    await waitUntilReady(`${url}/.well-known/openid-configuration`, child, `oidc-provider (${format})`);
    return { url, process: child, auth: basic(client.id, client.secret) };
  };
  const opaque = await provider('opaque');
  const jwt = await provider('jwt');
  return { bare: { url: bareUrl, process: bare }, opaque, jwt };
}
