// Memory: a fresh idgate, started as `pnpm start` starts it on the run's database, warmed up,
// then left idle (idle RSS), then loaded with maximum-rate TokenReview for `--soak` seconds (peak
// RSS: sampled every 100 ms, and VmHWM, the kernel's high-water mark of its whole life). The soak
// cycles through `soakTokens` distinct tokens when given, as a cluster's API server reviews the
// tokens of many people: every per-token cache of the server fills as it does in production.
import { join } from 'node:path';
import { memory, stop } from './processes.mjs';
import { reviewBody, reviewHeaders } from './reads.mjs';
import { runWrk } from './wrk.mjs';

const sleep = (/** @type {number} */ ms) => new Promise((done) => setTimeout(done, ms));

/**
 * @param {import('./scenario.mjs').Runner} run
 * @param {() => Promise<import('./scenario.mjs').Server>} start starts the fresh server
 * @param {{ apiKey: string, userToken: string, soakTokens?: { file: string, count: number, apiKey: string } }} f
 */
export async function memoryCheck(run, start, f) {
  const { options, log, tmp } = run;
  const server = await start();
  const pid = server.process.pid;
  const review = {
    method: 'POST',
    path: '/oauth/authenticate',
    headers: reviewHeaders(f.apiKey),
    body: reviewBody(f.userToken),
    expect: { status: 200, bodyIncludes: '"authenticated":true' },
  };
  const soakSpec =
    f.soakTokens === undefined
      ? review
      : {
          ...review,
          headers: reviewHeaders(f.soakTokens.apiKey),
          body: reviewBody('{1}'),
          source: /** @type {const} */ ('cycle'),
          file: f.soakTokens.file,
        };
  const load = (/** @type {number} */ seconds, /** @type {string} */ name) =>
    runWrk({
      targets: [{ url: server.url, pid }],
      spec: name === 'soak' ? soakSpec : review,
      specFile: join(tmp, `spec-memory-${name}.txt`),
      connections: options.connections,
      threads: options.threads,
      duration: seconds,
    });
  try {
    // Warm-up: the paths a cluster uses, then quiet. The idle figure is the median of samples
    // taken once a second after fifteen quiet seconds: idgate gives back the heap a burst grew
    // once it has been quiet for five seconds (V8 shrinks its young generation only when it saw
    // slow allocation over its last five seconds, and tries again five seconds later if not), so
    // three seconds caught a server still settling, not an idle one.
    await load(2, 'warmup');
    await sleep(15_000);
    /** @type {number[]} */
    const samples = [];
    for (let i = 0; i < 3; i++) {
      samples.push(memory(pid)?.rss ?? 0);
      await sleep(1000);
    }
    samples.sort((a, b) => a - b);
    const idle = samples[1] ?? 0;
    log(`idle RSS ${(idle / 2 ** 20).toFixed(0)} MB`);
    /** @type {{ idle: number, soakSeconds: number, soakTokens: number, soakPeak?: number, soakHwm?: number, soakRps?: number, soakErrors?: number }} */
    const result = { idle, soakSeconds: options.soak, soakTokens: f.soakTokens?.count ?? 1 };
    if (options.soak > 0) {
      log(
        `soak: ${options.soak} s of maximum-rate TokenReview over ${f.soakTokens?.count ?? 1} distinct token(s)`,
      );
      const soak = await load(options.soak, 'soak');
      result.soakPeak = soak.rss ?? 0;
      result.soakHwm = memory(pid)?.peak ?? 0;
      result.soakRps = soak.rps;
      result.soakErrors = soak.errors;
      log(
        `  ${soak.rps.toFixed(0)} req/s, ${soak.errors} errors, peak RSS ${(result.soakPeak / 2 ** 20).toFixed(0)} MB sampled, ` +
          `${(result.soakHwm / 2 ** 20).toFixed(0)} MB VmHWM`,
      );
    }
    return result;
  } finally {
    await stop(server.process);
  }
}
