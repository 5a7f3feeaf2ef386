// `pnpm bench`: drives a built idgate server, a bare fastify route and node-oidc-provider (opaque
// and JWT access tokens) over loopback with the same wrk loads, and prints the issue's table of
// ratios and goals, then every figure. See ../README.md.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseFlags, USAGE } from './cli.mjs';
import { idgateEnvironment, seed, startIdgate } from './idgate.mjs';
import { memoryCheck } from './memory.mjs';
import { passkeyScenario, signInScenarios } from './mfa.mjs';
import { databaseProbe, perRequest, throwawayDatabase } from './postgres.mjs';
import { freePort, killAllNow, memory, runCommand, stop, stopAll } from './processes.mjs';
import { readScenarios, reviewBody, reviewHeaders } from './reads.mjs';
import { startReferences } from './references.mjs';
import { buildReport, renderMarkdown } from './report.mjs';
import { createRunner } from './scenario.mjs';
import { mapLimit, refreshRotation, writeScenarios } from './writes.mjs';
import { WRK } from './wrk.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const benchDir = resolve(here, '..');
const repoDir = resolve(benchDir, '..');
const serverBin = join(repoDir, 'apps/server/dist/bin.js');

const parsed = parseFlags(process.argv.slice(2), process.env, join(benchDir, 'results'));
if (parsed.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (parsed.error !== undefined) {
  process.stderr.write(`bench: ${parsed.error}\n\n${USAGE}`);
  process.exit(2);
}
const options = parsed.options;
const outDir = resolve(options.out);
const log = (/** @type {string} */ message) => process.stderr.write(`bench: ${message}\n`);

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
  if (tmp !== '' && !options.keep) await rm(tmp, { recursive: true, force: true });
  else if (tmp !== '') log(`kept ${tmp}`);
}
process.on('exit', killAllNow);
// A failure outside the awaited chain (a stream error event) still stops the children and drops
// the database.
process.on('uncaughtException', (error) => {
  log(`unexpected: ${error.stack ?? error.message}`);
  cleanup().finally(() => process.exit(1));
});
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.on(signal, () => {
    log(`${signal}: stopping`);
    cleanup().finally(() => process.exit(130));
  });
}

/** @param {string} url @param {RequestInit} [init] */
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

async function main() {
  if (!existsSync(serverBin))
    throw new Error(`${serverBin} is missing: build first (pnpm build, or pnpm bench)`);
  await runCommand(WRK, ['--version'], { what: 'wrk --version' }).catch((error) => {
    // wrk prints its version and exits 1.
    if (!String(error.message).includes('wrk ')) {
      throw new Error(`wrk is not installed (apt-get install wrk): ${error.message}`);
    }
  });
  tmp = await mkdtemp(join(tmpdir(), 'idgate-bench-'));
  mkdirSync(outDir, { recursive: true });
  const machine = {
    date: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    loadavg: loadavg().map((n) => Math.round(n * 100) / 100),
  };
  const settings = {
    duration: options.duration,
    warmup: options.warmup,
    connections: options.connections,
    threads: options.threads,
    alg: options.alg,
    database: options.database,
    replicas: options.replicas,
    soak: options.soak,
    soakTokens: options.soakTokens,
    loadGenerator: 'wrk',
  };
  log(
    `node ${machine.node}, ${machine.cpus} CPUs, load ${machine.loadavg.join(' ')}; ${JSON.stringify(settings)}`,
  );

  // --- idgate: seed through its CLI, then serve ----------------------------------------------
  /** @type {{ probe: () => Promise<Record<string, number>>, perRequest: typeof perRequest } | undefined} */
  let database;
  let databaseUrl = `sqlite:${join(tmp, 'bench.db')}`;
  const statementFiles = [join(tmp, 'statements-1.json'), join(tmp, 'statements-2.json')];
  if (options.postgresUrl !== undefined) {
    const created = await throwawayDatabase(options.postgresUrl);
    dropDatabase = created.drop;
    databaseUrl = created.url;
    log(`created PostgreSQL database ${created.name}`);
    database = {
      probe: databaseProbe(
        options.postgresUrl,
        created.name,
        statementFiles.slice(0, options.replicas).join(','),
      ),
      perRequest,
    };
  }
  const env = idgateEnvironment({ port: await freePort(), databaseUrl, alg: options.alg });
  const issuer = /** @type {string} */ (env.IDGATE_ISSUER);
  log('seeding idgate through its CLI');
  const seeded = await seed(serverBin, env);
  const profileDir = join(outDir, 'profiles');
  if (options.cpuProf) mkdirSync(profileDir, { recursive: true });
  /** @param {number} index @param {number} [port] @param {boolean} [counting] */
  const serve = (index, port, counting = true) =>
    startIdgate({
      serverBin,
      env,
      ...(port === undefined ? {} : { port }),
      ...(options.nodeFlags === undefined ? {} : { nodeFlags: options.nodeFlags }),
      ...(options.cpuProf && index === 0 ? { cpuProfDir: profileDir } : {}),
      ...(database === undefined || !counting
        ? {}
        : {
            preload: [join(here, 'count-statements.mjs')],
            extraEnv: {
              BENCH_STATEMENTS_FILE: /** @type {string} */ (statementFiles[index]),
              BENCH_PG_FROM: join(repoDir, 'apps/server/package.json'),
            },
          }),
      logFile: join(tmp, index === 0 ? 'idgate.log' : `idgate-${index + 1}.log`),
    });
  const idgate = await serve(0);

  const tokenUrl = `${issuer}/token`;
  const passwordGrant = () =>
    tokenRequest(tokenUrl, seeded.auth.app, {
      grant_type: 'password',
      username: seeded.user.username,
      password: seeded.user.password,
      scope: 'openid groups offline_access',
    });
  const userToken = (await passwordGrant()).access_token;
  const warmReview = await http(`${issuer}/authenticate`, {
    method: 'POST',
    headers: reviewHeaders(seeded.apiKey),
    body: reviewBody(userToken),
  });
  if (warmReview.json?.status?.authenticated !== true)
    throw new Error(`TokenReview failed: ${warmReview.text}`);
  const discovery = await http(`${idgate.url}/oauth/.well-known/openid-configuration`);
  const jwks = await http(`${issuer}/keys`);
  if (discovery.status !== 200 || jwks.status !== 200) throw new Error('idgate discovery or JWKS failed');
  const serviceToken = (
    await tokenRequest(tokenUrl, seeded.auth.service, { grant_type: 'client_credentials' })
  ).access_token;

  // --- references ------------------------------------------------------------------------------
  const references = await startReferences({
    tmp,
    alg: options.alg,
    ...(options.cpuProf ? { cpuProfDir: profileDir } : {}),
    fixtures: { tokenReview: warmReview.text, discovery: discovery.text, jwks: jwks.text },
  });
  const oidcToken = (
    await tokenRequest(`${references.opaque.url}/token`, references.opaque.auth, {
      grant_type: 'client_credentials',
    })
  ).access_token;
  const jwtToken = (
    await tokenRequest(`${references.jwt.url}/token`, references.jwt.auth, {
      grant_type: 'client_credentials',
    })
  ).access_token;
  if (typeof jwtToken !== 'string' || jwtToken.split('.').length !== 3)
    throw new Error(`oidc-provider (jwt) issued no JWT: ${jwtToken}`);

  const run = createRunner({
    options,
    tmp,
    log,
    servers: {
      idgate,
      bare: references.bare,
      'oidc-provider': references.opaque,
      'oidc-provider-jwt': references.jwt,
    },
    ...(database === undefined ? {} : { database }),
  });

  // --- scenarios -------------------------------------------------------------------------------
  const { coldMinted } = await readScenarios(run, {
    apiKey: seeded.apiKey,
    userToken,
    serviceToken,
    auth: seeded.auth,
    oidc: { auth: references.opaque.auth, token: oidcToken },
    oidcJwt: { auth: references.jwt.auth },
    ciKeys: seeded.ciKeys,
  });
  const writeFixtures = { ...seeded, passwordGrant };
  await writeScenarios(run, writeFixtures, {
    writePaths: options.database === 'postgres' || options.only !== undefined,
  });
  await signInScenarios(run, seeded);
  await passkeyScenario(run, { serverBin, databaseUrl: `sqlite:${join(tmp, 'passkeys.db')}` });

  // --- replicas --------------------------------------------------------------------------------
  if (options.replicas > 1) {
    log('starting a second idgate replica on the same database');
    const second = await serve(1, await freePort());
    run.servers['idgate-replicas'] = idgate;
    const both = [idgate, second];
    if (run.wanted('replicas.tokenreview-warm'))
      await run.scenario(
        'replicas.tokenreview-warm',
        'idgate-replicas',
        'TokenReview, the same user token, both replicas loaded at once',
        {
          method: 'POST',
          path: '/oauth/authenticate',
          headers: reviewHeaders(seeded.apiKey),
          body: reviewBody(userToken),
          expect: { status: 200, bodyIncludes: '"authenticated":true' },
        },
        { targets: both },
      );
    if (run.wanted('replicas.refresh-rotation'))
      await refreshRotation(run, writeFixtures, 'replicas.refresh-rotation', both);
    await stop(second.process);
  }

  const lifetimePeak = memory(idgate.process.pid)?.peak ?? 0;
  if (options.cpuProf) {
    await stop(idgate.process, 10_000);
    log(`CPU profiles of idgate and the bare route written to ${profileDir}`);
  }

  // --- memory: a fresh server, idle then soaked ------------------------------------------------
  /** @type {Awaited<ReturnType<typeof memoryCheck>> | undefined} */
  let memoryResult;
  if (run.wanted('memory')) {
    // The soak's distinct tokens are people's, as a cluster's reviews are: the access tokens of
    // refresh chains (one password sign-in per chain), minted by this server (the fresh one
    // shares its database and keys).
    /** @type {{ file: string, count: number } | undefined} */
    let soakTokens;
    if (options.soak > 0 && options.soakTokens > 0) {
      const chains = join(tmp, 'soak-chains.txt');
      const started = await mapLimit(Array.from({ length: 48 }), 4, () =>
        tokenRequest(tokenUrl, seeded.soak.auth, {
          grant_type: 'password',
          ...seeded.soak.user,
          scope: 'openid groups offline_access',
        }),
      );
      writeFileSync(chains, `${started.map((grant) => grant.refresh_token).join('\n')}\n`);
      const file = join(tmp, 'soak.txt');
      writeFileSync(file, '');
      const count = await run.mint(
        'soak tokens',
        idgate,
        {
          method: 'POST',
          path: '/oauth/token',
          headers: { authorization: seeded.soak.auth, 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=refresh_token&refresh_token={1}',
          source: 'refresh',
          file: chains,
          expect: { status: 200, bodyIncludes: '"access_token"' },
          collect: { file: '', field: 'access_token' },
        },
        options.soakTokens,
        file,
      );
      soakTokens = { file, count };
    }
    await stop(idgate.process);
    memoryResult = await memoryCheck(run, () => serve(0, undefined, false), {
      apiKey: seeded.apiKey,
      userToken,
      ...(soakTokens === undefined ? {} : { soakTokens: { ...soakTokens, apiKey: seeded.soak.apiKey } }),
    });
  }

  const report = buildReport({
    machine,
    settings,
    tokens: { coldMinted },
    measurements: run.measurements,
    idgateRss: {
      underLoad: Math.max(0, ...run.measurements.filter((m) => m.system === 'idgate').map((m) => m.rss ?? 0)),
      lifetime: lifetimePeak,
    },
    memory: memoryResult,
    notes: run.notes,
  });
  const markdown = renderMarkdown(report);
  writeFileSync(join(outDir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(outDir, 'latest.md'), markdown);
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
  for (const name of [
    'idgate.log',
    'idgate-2.log',
    'bare.log',
    'oidc-provider-opaque.log',
    'oidc-provider-jwt.log',
  ]) {
    const file = join(tmp, name);
    if (tmp !== '' && existsSync(file)) {
      const text = readFileSync(file, 'utf8').trim().split('\n').slice(-15).join('\n');
      if (text !== '') process.stderr.write(`--- last lines of ${name}\n${text}\n`);
    }
  }
  await cleanup();
  process.exitCode = 1;
}
