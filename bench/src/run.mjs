// `pnpm bench`: drives a built idgate server, a bare fastify route and node-oidc-provider over
// loopback with the same loads, and prints a table of requests/s, latency, errors and peak RSS,
// each idgate figure as a ratio to its reference. See ../README.md.
import { existsSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import {
  freePort,
  killAllNow,
  memory,
  runNode,
  running,
  spawnNode,
  stop,
  stopAll,
  waitUntilReady,
} from './processes.mjs';
import { evaluateTargets, renderMarkdown, TARGETS } from './report.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const benchDir = resolve(here, '..');
const repoDir = resolve(benchDir, '..');
const serverBin = join(repoDir, 'apps/server/dist/bin.js');
const loadScript = join(here, 'load.mjs');

/**
 * How idgate runs in production (deploy/Dockerfile, `pnpm start`): an 8 MiB young-generation
 * semi-space, and glibc malloc with a fixed mmap threshold so argon2id's 19 MiB buffers go back to
 * the system when a sign-in ends. A test keeps the three places in step.
 */
const IDGATE_NODE_FLAGS = ['--max-semi-space-size=8'];
const IDGATE_MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' };

const USAGE = `usage: pnpm --filter @idgate/bench bench [options]   (or: node bench/src/run.mjs [options])

  --duration <s>      measured seconds per scenario (default 5)
  --warmup <s>        warm-up seconds before each (default 1)
  --connections <n>   concurrent connections (default 64)
  --alg <alg>         idgate signing algorithm: RS256, ES256 or EdDSA (default RS256)
  --postgres <url>    run idgate on PostgreSQL instead of SQLite: a throwaway database is created
                      on this server (the URL's user needs CREATEDB) and dropped at the end
  --only <regex>      run only the scenarios whose id matches (ids: see the table)
  --max-tokens <n>    cap on tokens minted for each of the cold and expired pools (default 60000)
  --out <dir>         where latest.md and latest.json go (default bench/results)
  --node-flags=<s>    Node.js flags for the idgate server, space-separated (default: those of
                      deploy/Dockerfile and \`pnpm start\`, "${IDGATE_NODE_FLAGS.join(' ')}")
  --cpu-prof          write V8 CPU profiles of the idgate server to <out>/profiles and of the
                      bare route to <out>/profiles/bare
  --keep              keep the temporary directory (database, logs, token pools)
`;

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1' },
    connections: { type: 'string', default: '64' },
    alg: { type: 'string', default: 'RS256' },
    postgres: { type: 'string' },
    only: { type: 'string' },
    'max-tokens': { type: 'string', default: '60000' },
    out: { type: 'string', default: join(benchDir, 'results') },
    'cpu-prof': { type: 'boolean', default: false },
    'node-flags': { type: 'string' },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
  allowPositionals: false,
});
if (flags.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

/** @param {string} name @param {string} raw @param {number} min @param {number} max */
function numberFlag(name, raw, min, max) {
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    process.stderr.write(`bench: --${name} ${raw}: must be a number from ${min} to ${max}\n`);
    process.exit(2);
  }
  return value;
}
const DURATION = numberFlag('duration', flags.duration, 1, 600);
const WARMUP = numberFlag('warmup', flags.warmup, 0, 60);
const CONNECTIONS = Math.round(numberFlag('connections', flags.connections, 1, 1024));
const MAX_TOKENS = Math.round(numberFlag('max-tokens', flags['max-tokens'], 100, 1_000_000));
const ALG = flags.alg;
if (!['RS256', 'ES256', 'EdDSA'].includes(ALG)) {
  process.stderr.write(`bench: --alg ${ALG}: must be RS256, ES256 or EdDSA\n`);
  process.exit(2);
}
const only = flags.only === undefined ? undefined : new RegExp(flags.only);
const outDir = resolve(flags.out);

const log = (/** @type {string} */ message) => process.stderr.write(`bench: ${message}\n`);
const mb = (/** @type {number} */ bytes) => (bytes / 2 ** 20).toFixed(0);
const sleep = (/** @type {number} */ ms) => new Promise((done) => setTimeout(done, ms));

// ---------------------------------------------------------------------------------------------
// Cleanup: every child is stopped on the way out, whatever the way.

let tmp = '';
let cleaning = false;
/** @type {(() => Promise<void>) | undefined} */
let dropDatabase;
async function cleanup() {
  if (cleaning) return;
  cleaning = true;
  await stopAll();
  if (dropDatabase !== undefined) {
    await dropDatabase().catch((/** @type {unknown} */ error) =>
      log(`could not drop the database: ${error}`),
    );
  }
  if (tmp !== '' && !flags.keep) await rm(tmp, { recursive: true, force: true });
  else if (tmp !== '') log(`kept ${tmp}`);
}
process.on('exit', killAllNow);
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.on(signal, () => {
    log(`${signal}: stopping`);
    cleanup().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers (setup only; loads go through load.mjs).

const basic = (/** @type {string} */ id, /** @type {string} */ secret) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/**
 * @param {string} url
 * @param {RequestInit} [init]
 * @returns {Promise<{ status: number, text: string, json: any }>}
 */
async function http(url, init = {}) {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
  const text = await response.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json };
}

/** @param {string} url @param {string} authorization @param {Record<string, string>} form */
async function tokenRequest(url, authorization, form) {
  const answer = await http(url, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  if (answer.status !== 200)
    throw new Error(`POST ${url} ${form.grant_type}: ${answer.status} ${answer.text}`);
  return answer.json;
}

/**
 * Maps with at most `limit` calls in flight.
 * @template T, R
 * @param {T[]} items @param {number} limit @param {(item: T) => Promise<R>} fn
 */
async function mapLimit(items, limit, fn) {
  /** @type {R[]} */
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(/** @type {T} */ (items[index]));
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

const REVIEW = ['{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"', '"}}'];
const reviewBody = (/** @type {string} */ token) => REVIEW[0] + token + REVIEW[1];

// ---------------------------------------------------------------------------------------------
// Loads.

/**
 * @typedef {{ requests: number, duration: number, rps: number,
 *   latency: { p50: number, p90: number, p99: number, max: number }, errors: number,
 *   cpu?: { client: number, serverMicrosPerRequest?: number }, detail: Record<string, any> }} LoadResult
 * @typedef {LoadResult & { id: string, system: string, label: string, rss?: number }} Measurement
 */

/**
 * Runs one load in its own process while sampling the RSS of `serverPid` every 100 ms.
 * @param {Record<string, any>} spec @param {number | undefined} serverPid
 * @returns {Promise<LoadResult & { rss?: number }>}
 */
async function load(spec, serverPid) {
  /** @type {Record<string, any>} */
  const full = { pipelining: 1, timeout: 10, warmup: 0, serverPid, ...spec };
  const limitMs =
    full.amount === undefined
      ? (full.duration + full.warmup + 60) * 1000
      : Math.max(120_000, (full.amount / 50) * 1000);
  let rss = 0;
  const sampler = setInterval(() => {
    const now = memory(serverPid);
    if (now !== undefined) rss = Math.max(rss, now.rss);
  }, 100);
  try {
    const output = await runNode([loadScript], {
      input: JSON.stringify(full),
      timeoutMs: limitMs,
      what: `load ${full.request.method} ${full.request.path}`,
    });
    const result = JSON.parse(output.trim().split('\n').pop() ?? '');
    return rss > 0 ? { ...result, rss } : result;
  } finally {
    clearInterval(sampler);
  }
}

/**
 * Mints `count` access tokens with the client credentials grant, appended to `file`.
 * @param {string} baseUrl @param {string} authorization @param {number} count @param {string} file
 */
async function mint(baseUrl, authorization, count, file) {
  if (count <= 0) return 0;
  const part = `${file}.part`;
  const started = Date.now();
  const result = await load(
    {
      url: baseUrl,
      connections: Math.min(CONNECTIONS, 32),
      amount: count,
      request: {
        method: 'POST',
        path: '/oauth/token',
        headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      },
      expect: { status: 200, bodyIncludes: '"access_token"' },
      collect: { file: part, field: 'access_token' },
    },
    undefined,
  );
  const minted = result.detail.collected;
  if (minted < count * 0.95)
    throw new Error(`minting tokens: got ${minted} of ${count} (${JSON.stringify(result.detail)})`);
  await appendFile(file, await readFile(part, 'utf8'));
  await rm(part);
  log(`minted ${minted} tokens in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return minted;
}

/**
 * Creates an empty database on the PostgreSQL server of `url`; returns its URL.
 * @param {string} url
 */
async function throwawayDatabase(url) {
  const name = `idgate_bench_${Date.now().toString(36)}_${process.pid}`;
  /** @param {string} sql */
  const admin = async (sql) => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  dropDatabase = () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  const database = new URL(url);
  database.pathname = `/${name}`;
  log(`created PostgreSQL database ${name}`);
  return database.toString();
}

// ---------------------------------------------------------------------------------------------

async function main() {
  if (!existsSync(serverBin)) {
    throw new Error(`${serverBin} is missing: build first (pnpm build, or pnpm bench, which builds)`);
  }
  tmp = await mkdtemp(join(tmpdir(), 'idgate-bench-'));
  await mkdir(outDir, { recursive: true });
  const startedAt = new Date();
  const machine = {
    date: startedAt.toISOString(),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    loadavg: loadavg().map((n) => Math.round(n * 100) / 100),
  };
  const settings = {
    duration: DURATION,
    warmup: WARMUP,
    connections: CONNECTIONS,
    pipelining: 1,
    alg: ALG,
    database: flags.postgres === undefined ? 'sqlite' : 'postgres',
  };
  log(
    `node ${machine.node}, ${machine.cpus} CPUs, load ${machine.loadavg.join(' ')}; ${JSON.stringify(settings)}`,
  );

  // --- idgate: seed through its CLI, then serve ----------------------------------------------
  const idgatePort = await freePort();
  const idgateUrl = `http://127.0.0.1:${idgatePort}`;
  const issuer = `${idgateUrl}/oauth`;
  const idgateEnv = {
    ...process.env,
    ...IDGATE_MALLOC_ENV,
    NODE_ENV: 'production',
    IDGATE_CONFIG: '',
    IDGATE_HOST: '127.0.0.1',
    IDGATE_PORT: String(idgatePort),
    IDGATE_ISSUER: issuer,
    IDGATE_DATABASE_URL:
      flags.postgres === undefined
        ? `sqlite:${join(tmp, 'bench.db')}`
        : await throwawayDatabase(flags.postgres),
    IDGATE_SECRET: `bench-${Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64url')}`,
    IDGATE_SIGNING_ALGORITHM: ALG,
    IDGATE_LOG_LEVEL: 'warn',
  };
  /** @param {string[]} args @param {string} [input] */
  const idgate = async (args, input) =>
    JSON.parse(
      await runNode([serverBin, ...args], { env: idgateEnv, input, what: `idgate ${args.join(' ')}` }),
    );

  log('seeding idgate through its CLI');
  await idgate(['init', '--json']);
  const app = await idgate([
    'clients',
    'add',
    '--name',
    'bench-app',
    '--trusted',
    '--grant',
    'password',
    'refresh_token',
    '--scope',
    'openid',
    'groups',
    'offline_access',
    '--json',
  ]);
  const service = await idgate([
    'clients',
    'add',
    '--name',
    'bench-service',
    '--grant',
    'client_credentials',
    '--json',
  ]);
  const expiring = await idgate([
    'clients',
    'add',
    '--name',
    'bench-expiring',
    '--grant',
    'client_credentials',
    '--access-token-ttl',
    '1',
    '--json',
  ]);
  const apiKey = (await idgate(['api-keys', 'add', '--name', 'bench', '--scope', 'tokenreview', '--json']))
    .key;
  // Not prefixed with the username: the password policy refuses a password that contains it.
  const password = `pw-${Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('base64url')}`;
  await idgate(
    [
      'users',
      'add',
      'bench',
      '--group',
      'dev',
      '--group',
      'ops',
      '--email',
      'bench@example.com',
      '--password-stdin',
      '--json',
    ],
    password,
  );

  const profileDir = join(outDir, 'profiles');
  if (flags['cpu-prof']) await mkdir(profileDir, { recursive: true });
  const idgateServer = spawnNode(
    [
      ...(flags['node-flags'] === undefined
        ? IDGATE_NODE_FLAGS
        : flags['node-flags'].split(/\s+/).filter(Boolean)),
      ...(flags['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
      serverBin,
      'serve',
    ],
    { env: idgateEnv, logFile: join(tmp, 'idgate.log') },
  );
  await waitUntilReady(`${idgateUrl}/readyz`, idgateServer, 'idgate');

  const appAuth = basic(app.clientId, app.clientSecret);
  const serviceAuth = basic(service.clientId, service.clientSecret);
  const expiringAuth = basic(expiring.clientId, expiring.clientSecret);
  const tokenUrl = `${issuer}/token`;
  const passwordGrant = () =>
    tokenRequest(tokenUrl, appAuth, {
      grant_type: 'password',
      username: 'bench',
      password,
      scope: 'openid groups offline_access',
    });

  const userToken = (await passwordGrant()).access_token;
  const reviewHeaders = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const warmReview = await http(`${issuer}/authenticate`, {
    method: 'POST',
    headers: reviewHeaders,
    body: reviewBody(userToken),
  });
  if (warmReview.json?.status?.authenticated !== true)
    throw new Error(`TokenReview failed: ${warmReview.text}`);
  const discoveryPath = '/oauth/.well-known/openid-configuration';
  const discovery = await http(`${idgateUrl}${discoveryPath}`);
  const jwks = await http(`${issuer}/keys`);
  if (discovery.status !== 200 || jwks.status !== 200) throw new Error('idgate discovery or JWKS failed');
  const serviceToken = (await tokenRequest(tokenUrl, serviceAuth, { grant_type: 'client_credentials' }))
    .access_token;
  const introspected = await http(`${issuer}/introspect`, {
    method: 'POST',
    headers: { authorization: serviceAuth, 'content-type': 'application/x-www-form-urlencoded' },
    body: `token=${serviceToken}`,
  });
  if (introspected.json?.active !== true)
    throw new Error(`idgate introspection failed: ${introspected.text}`);

  // --- references ------------------------------------------------------------------------------
  const fixtures = join(tmp, 'fixtures.json');
  await writeFile(
    fixtures,
    JSON.stringify({ tokenReview: warmReview.text, discovery: discovery.text, jwks: jwks.text }),
  );
  const barePort = await freePort();
  const bareUrl = `http://127.0.0.1:${barePort}`;
  const bareServer = spawnNode(
    [
      ...(flags['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}/bare`] : []),
      join(here, 'servers/bare.mjs'),
    ],
    {
      env: { ...process.env, NODE_ENV: 'production', BENCH_PORT: String(barePort), BENCH_FIXTURES: fixtures },
      logFile: join(tmp, 'bare.log'),
    },
  );
  await waitUntilReady(`${bareUrl}/healthz`, bareServer, 'bare fastify route');

  const oidcPort = await freePort();
  const oidcUrl = `http://127.0.0.1:${oidcPort}`;
  const oidcClient = {
    id: 'bench-service',
    secret: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url'),
  };
  const oidcServer = spawnNode([join(here, 'servers/oidc-provider.mjs')], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      BENCH_PORT: String(oidcPort),
      BENCH_ALG: ALG,
      BENCH_CLIENT_ID: oidcClient.id,
      BENCH_CLIENT_SECRET: oidcClient.secret,
    },
    logFile: join(tmp, 'oidc-provider.log'),
  });
  await waitUntilReady(`${oidcUrl}/.well-known/openid-configuration`, oidcServer, 'oidc-provider');
  const oidcAuth = basic(oidcClient.id, oidcClient.secret);
  const oidcToken = (await tokenRequest(`${oidcUrl}/token`, oidcAuth, { grant_type: 'client_credentials' }))
    .access_token;
  const oidcIntrospected = await http(`${oidcUrl}/token/introspection`, {
    method: 'POST',
    headers: { authorization: oidcAuth, 'content-type': 'application/x-www-form-urlencoded' },
    body: `token=${oidcToken}`,
  });
  if (oidcIntrospected.json?.active !== true)
    throw new Error(`oidc-provider introspection failed: ${oidcIntrospected.text}`);

  const servers = {
    idgate: { url: idgateUrl, process: idgateServer },
    bare: { url: bareUrl, process: bareServer },
    'oidc-provider': { url: oidcUrl, process: oidcServer },
  };

  // --- scenarios -------------------------------------------------------------------------------
  /** @type {Measurement[]} */
  const measurements = [];
  /** @type {string[]} */
  const notes = [];
  const wanted = (/** @type {string} */ id) => only === undefined || only.test(id);

  /**
   * @param {string} id @param {keyof typeof servers} system @param {string} label
   * @param {Record<string, any>} request @param {{ status: number, bodyIncludes?: string }} expect
   * @param {{ warmup?: number, duration?: number }} [overrides]
   */
  async function scenario(id, system, label, request, expect, overrides = {}) {
    const server = servers[system];
    if (!running(server.process)) throw new Error(`${system} is no longer running`);
    log(`${id}: ${label}`);
    const result = await load(
      {
        url: server.url,
        connections: CONNECTIONS,
        duration: overrides.duration ?? DURATION,
        warmup: overrides.warmup ?? WARMUP,
        request,
        expect,
      },
      server.process.pid,
    );
    if (!running(server.process)) throw new Error(`${system} exited during ${id}`);
    const measurement = { id, system, label, ...result };
    measurements.push(measurement);
    const { detail } = result;
    log(
      `  ${result.rps.toFixed(0)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ` +
        `${result.errors} errors${result.rss === undefined ? '' : `, RSS ${(result.rss / 2 ** 20).toFixed(0)} MB`}`,
    );
    if (result.errors > 0) notes.push(`${id}: ${result.errors} errors ${JSON.stringify(detail)}`);
    if (detail.ranOut) {
      notes.push(
        `${id}: its ${detail.pool} tokens ran out after ${result.duration} s (figures cover that time; ` +
          'raise --max-tokens for a full run)',
      );
    }
    await sleep(300);
    return measurement;
  }

  const reviewRequest = (/** @type {string} */ token) => ({
    method: 'POST',
    path: '/oauth/authenticate',
    headers: reviewHeaders,
    body: reviewBody(token),
  });
  const VALID = { status: 200, bodyIncludes: '"authenticated":true' };
  const INVALID = { status: 200, bodyIncludes: '"authenticated":false' };

  // 1. TokenReview, warm, against the HTTP stack's limit and oidc-provider's introspection.
  if (wanted('bare.tokenreview'))
    await scenario(
      'bare.tokenreview',
      'bare',
      'fixed TokenReview answer, nothing verified',
      reviewRequest(userToken),
      VALID,
    );
  if (wanted('idgate.tokenreview-warm'))
    await scenario(
      'idgate.tokenreview-warm',
      'idgate',
      'TokenReview, the same user token every time',
      reviewRequest(userToken),
      VALID,
    );
  const introspect = (
    /** @type {string} */ path,
    /** @type {string} */ auth,
    /** @type {string} */ token,
  ) => ({
    method: 'POST',
    path,
    headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
    body: `token=${token}`,
  });
  const ACTIVE = { status: 200, bodyIncludes: '"active":true' };
  if (wanted('oidc-provider.introspection'))
    await scenario(
      'oidc-provider.introspection',
      'oidc-provider',
      'introspection of its client_credentials token',
      introspect('/token/introspection', oidcAuth, oidcToken),
      ACTIVE,
    );
  if (wanted('idgate.introspection'))
    await scenario(
      'idgate.introspection',
      'idgate',
      'introspection of a client_credentials token',
      introspect('/oauth/introspect', serviceAuth, serviceToken),
      ACTIVE,
    );

  // 2. TokenReview, cold: a token the server has never seen on every request. A probe (which is
  // the warm-up) measures the rate, then enough tokens are minted for the measured run; a run whose
  // pool runs out ends early rather than repeat a token.
  let coldMinted = 0;
  const coldFile = join(tmp, 'cold.txt');
  const expiredFile = join(tmp, 'expired.txt');
  let expiredReadyAt = 0;
  const needCold = wanted('idgate.tokenreview-cold');
  const needExpired = wanted('idgate.tokenreview-expired');
  const coldRequest = (/** @type {string} */ file, start = 0) => ({
    ...reviewRequest(''),
    body: undefined,
    tokens: { file, start, template: REVIEW },
  });
  if (needCold || needExpired) {
    await writeFile(coldFile, '');
    let minted = await mint(idgateUrl, serviceAuth, Math.min(4000, MAX_TOKENS), coldFile);
    const probe = await load(
      {
        url: idgateUrl,
        connections: CONNECTIONS,
        duration: Math.max(1, WARMUP),
        request: coldRequest(coldFile),
        expect: VALID,
      },
      idgateServer.pid,
    );
    const used = probe.detail.sent;
    // A one-second probe right after minting runs well below the steady rate (2.2× below on a
    // 2-CPU machine); the warm rate bounds the cold one from above.
    const warm = measurements.find((m) => m.id === 'idgate.tokenreview-warm')?.rps ?? Infinity;
    const rate = Math.min(probe.rps * 2.5, warm);
    log(
      `cold probe: ${probe.rps.toFixed(0)} req/s over ${used} tokens; planning for ${rate.toFixed(0)} req/s`,
    );
    if (needCold) {
      const more = Math.min(MAX_TOKENS, Math.ceil(rate * DURATION * 1.2)) - (minted - used);
      if (more > 0) minted += await mint(idgateUrl, serviceAuth, more, coldFile);
    }
    if (needExpired) {
      await writeFile(expiredFile, '');
      await mint(
        idgateUrl,
        expiringAuth,
        Math.min(MAX_TOKENS, Math.ceil(rate * (WARMUP + DURATION) * 1.2)),
        expiredFile,
      );
      // Lifetime 1 s and `exp` in whole seconds: all are expired 2.5 s from now.
      expiredReadyAt = Date.now() + 2500;
    }
    coldMinted = minted;
    if (needCold)
      await scenario(
        'idgate.tokenreview-cold',
        'idgate',
        'TokenReview, a never-seen client_credentials token on every request',
        coldRequest(coldFile, used),
        VALID,
        { warmup: 0 },
      );
  }

  // 3. TokenReview of invalid tokens, each one different.
  if (wanted('idgate.tokenreview-bad-signature'))
    await scenario(
      'idgate.tokenreview-bad-signature',
      'idgate',
      'TokenReview, a real token with a fresh jti in its payload: the signature does not match',
      { ...reviewRequest(''), body: undefined, forged: { token: serviceToken, template: REVIEW } },
      INVALID,
    );
  if (wanted('idgate.tokenreview-garbage'))
    await scenario(
      'idgate.tokenreview-garbage',
      'idgate',
      'TokenReview, random JWT-shaped garbage',
      { ...reviewRequest(''), body: undefined, garbage: { template: REVIEW } },
      INVALID,
    );
  if (needExpired) {
    await sleep(Math.max(0, expiredReadyAt - Date.now()));
    await scenario(
      'idgate.tokenreview-expired',
      'idgate',
      'TokenReview, a different expired token on every request',
      coldRequest(expiredFile),
      INVALID,
    );
  }

  // 4. Discovery and JWKS.
  const get = (/** @type {string} */ path) => ({ method: 'GET', path, headers: {} });
  const DISCOVERY = { status: 200, bodyIncludes: '"issuer"' };
  if (wanted('bare.discovery'))
    await scenario('bare.discovery', 'bare', 'fixed discovery document', get(discoveryPath), DISCOVERY);
  if (wanted('idgate.discovery'))
    await scenario('idgate.discovery', 'idgate', 'discovery document', get(discoveryPath), DISCOVERY);
  if (wanted('oidc-provider.discovery'))
    await scenario(
      'oidc-provider.discovery',
      'oidc-provider',
      'discovery document',
      get('/.well-known/openid-configuration'),
      DISCOVERY,
    );
  const KEYS = { status: 200, bodyIncludes: '"keys"' };
  if (wanted('bare.jwks')) await scenario('bare.jwks', 'bare', 'fixed JWKS', get('/oauth/keys'), KEYS);
  if (wanted('idgate.jwks')) await scenario('idgate.jwks', 'idgate', 'JWKS', get('/oauth/keys'), KEYS);

  // 5. Token endpoint.
  const tokenForm = (/** @type {string} */ path, /** @type {string} */ auth) => ({
    method: 'POST',
    path,
    headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  const ISSUED = { status: 200, bodyIncludes: '"access_token"' };
  if (wanted('oidc-provider.client-credentials'))
    await scenario(
      'oidc-provider.client-credentials',
      'oidc-provider',
      'token endpoint, client_credentials',
      tokenForm('/token', oidcAuth),
      ISSUED,
    );
  if (wanted('idgate.client-credentials'))
    await scenario(
      'idgate.client-credentials',
      'idgate',
      'token endpoint, client_credentials',
      tokenForm('/oauth/token', serviceAuth),
      ISSUED,
    );
  if (wanted('idgate.refresh-rotation')) {
    // Each connection in flight at the end of warm-up and of the run strands its refresh token,
    // so the pool holds two per connection and some spare; every one costs a password sign-in.
    const count = 2 * CONNECTIONS + 16;
    const before = memory(idgateServer.pid);
    const grants = await mapLimit(Array.from({ length: count }), 4, () => passwordGrant());
    const after = memory(idgateServer.pid);
    if (before !== undefined && after !== undefined) {
      // argon2id takes 19 MiB per sign-in; RSS that stays up after them is memory malloc kept.
      const message =
        `the ${count} password sign-ins that fill the refresh pool (argon2id, 19 MiB each) left ` +
        `idgate's RSS at ${mb(after.rss)} MB, from ${mb(before.rss)} MB before them`;
      log(message);
      notes.push(message);
    }
    const refreshFile = join(tmp, 'refresh.txt');
    await writeFile(refreshFile, `${grants.map((grant) => grant.refresh_token).join('\n')}\n`);
    await scenario(
      'idgate.refresh-rotation',
      'idgate',
      'token endpoint, refresh_token: each request sends the token the previous one got',
      {
        method: 'POST',
        path: '/oauth/token',
        headers: { authorization: appAuth, 'content-type': 'application/x-www-form-urlencoded' },
        refresh: { file: refreshFile, template: ['grant_type=refresh_token&refresh_token=', ''] },
      },
      ISSUED,
    );
  }

  const idgateMemory = memory(idgateServer.pid);
  const peaks = {
    underLoad: Math.max(0, ...measurements.filter((m) => m.system === 'idgate').map((m) => m.rss ?? 0)),
    lifetime: idgateMemory?.peak ?? 0,
  };
  if (flags['cpu-prof']) {
    await stop(idgateServer, 10_000);
    log(`CPU profiles of idgate and the bare route written to ${profileDir}`);
  }

  const report = {
    machine,
    settings,
    tokens: { coldMinted },
    measurements,
    idgateRss: peaks,
    targets: evaluateTargets(TARGETS, measurements, peaks),
    notes,
  };
  const markdown = renderMarkdown(report);
  await writeFile(join(outDir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(join(outDir, 'latest.md'), markdown);
  process.stdout.write(markdown);
  log(`written to ${join(outDir, 'latest.md')} and latest.json`);
}

try {
  await main();
  await cleanup();
} catch (error) {
  // After SIGINT or SIGTERM the failure is only the interrupted load: nothing to report.
  if (cleaning) await new Promise(() => {});
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  for (const name of ['idgate.log', 'bare.log', 'oidc-provider.log']) {
    const file = join(tmp, name);
    if (tmp !== '' && existsSync(file)) {
      const text = (await readFile(file, 'utf8')).trim().split('\n').slice(-15).join('\n');
      if (text !== '') process.stderr.write(`--- last lines of ${name}\n${text}\n`);
    }
  }
  await cleanup();
  process.exitCode = 1;
}
