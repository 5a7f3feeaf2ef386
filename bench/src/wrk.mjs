// Loads with wrk (a C load generator, https://github.com/wg/wrk): a spec file for wrk/load.lua,
// one wrk process per load, its `BENCH-RESULT` line turned into a measurement.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSeconds, memory, running, spawnCommand } from './processes.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const WRK_SCRIPT = join(here, 'wrk/load.lua');
export const WRK = process.env.BENCH_WRK ?? 'wrk';

/**
 * @typedef {LoadSpec | ((target: number, phase: 'warmup' | 'run') => LoadSpec)} SpecSource
 * @typedef {{ method: string, path: string, headers?: Record<string, string>, body?: string,
 *   source?: 'fixed' | 'pool' | 'cycle' | 'refresh' | 'forged' | 'garbage', file?: string, start?: number,
 *   forged?: { header: string, before: string, after: string, signature: string },
 *   expect: { status: number, bodyIncludes?: string },
 *   collect?: { file: string, field?: string, location?: string, tag?: string, amount?: number } }} LoadSpec
 * @typedef {{ requests: number, duration: number, rps: number,
 *   latency: { p50: number, p90: number, p99: number, max: number }, errors: number,
 *   cpu: { client?: number, serverMicrosPerRequest?: number }, detail: Record<string, any> }} LoadResult
 */

/**
 * The spec file's text for `load.lua` (one `key=value` a line).
 * @param {LoadSpec} spec @param {number} threads
 */
export function specText(spec, threads) {
  /** @type {string[]} */
  const lines = [`method=${spec.method}`, `path=${spec.path}`, `threads=${threads}`];
  for (const [name, value] of Object.entries(spec.headers ?? {})) lines.push(`header=${name}: ${value}`);
  if (spec.body !== undefined) lines.push(`body=${spec.body}`);
  lines.push(`source=${spec.source ?? 'fixed'}`);
  if (spec.file !== undefined) lines.push(`file=${spec.file}`);
  if (spec.start !== undefined) lines.push(`start=${spec.start}`);
  if (spec.forged !== undefined) {
    const { header, before, after, signature } = spec.forged;
    lines.push(
      `forged_header=${header}`,
      `forged_before=${before}`,
      `forged_after=${after}`,
      `forged_signature=${signature}`,
    );
  }
  lines.push(`expect_status=${spec.expect.status}`);
  if (spec.expect.bodyIncludes !== undefined) lines.push(`expect_body=${spec.expect.bodyIncludes}`);
  if (spec.collect !== undefined) {
    lines.push(`collect_file=${spec.collect.file}`);
    if (spec.collect.field !== undefined) lines.push(`collect_field=${spec.collect.field}`);
    if (spec.collect.location !== undefined) lines.push(`collect_location=${spec.collect.location}`);
    if (spec.collect.tag !== undefined) lines.push(`collect_tag=${spec.collect.tag}`);
    if (spec.collect.amount !== undefined) lines.push(`collect_amount=${spec.collect.amount}`);
  }
  for (const line of lines) {
    if (line.includes('\n')) throw new Error(`wrk spec: a value holds a newline: ${line.slice(0, 60)}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Turns wrk's stdout (its own summary, then load.lua's `BENCH-RESULT` line) into a result.
 * Errors are socket errors, timeouts, responses with another status than expected, expected
 * statuses with the wrong body, and refresh requests sent with an empty pool; wrk's own "non-2xx"
 * count is not used (a pending device poll is an expected 400).
 * @param {string} stdout @param {number} [clockTicks] clock ticks per second of /proc
 * @returns {LoadResult}
 */
export function parseWrkOutput(stdout, clockTicks = 100) {
  const line = stdout.split('\n').find((l) => l.startsWith('BENCH-RESULT '));
  if (line === undefined) throw new Error(`wrk printed no result line:\n${stdout.slice(-2000)}`);
  const raw = JSON.parse(line.slice('BENCH-RESULT '.length));
  const ranOut = raw.threads_ran_out > 0;
  // A thread that used up its pool stops; the others run on to the end of the duration. The
  // rate then covers the span in which requests were sent, not wrk's fixed duration.
  const durationUs = ranOut && raw.span_us > 0 ? raw.span_us : raw.duration_us;
  const duration = durationUs / 1e6;
  const socket = raw.errors.connect + raw.errors.read + raw.errors.write;
  const errors = socket + raw.errors.timeout + raw.bad_status + raw.bad_body + raw.pool_empty;
  const ms = (/** @type {number} */ us) => Math.round(us / 10) / 100;
  return {
    requests: raw.requests,
    duration,
    rps: duration > 0 ? raw.requests / duration : 0,
    latency: {
      p50: ms(raw.latency_us.p50),
      p90: ms(raw.latency_us.p90),
      p99: ms(raw.latency_us.p99),
      max: ms(raw.latency_us.max),
    },
    errors,
    cpu: raw.cpu_ticks >= 0 ? { client: raw.cpu_ticks / clockTicks / (raw.duration_us / 1e6) } : {},
    detail: {
      socketErrors: socket,
      timeouts: raw.errors.timeout,
      unexpectedStatus: raw.bad_status,
      bodyMismatches: raw.bad_body,
      statusCodes: raw.statuses,
      ...(raw.pool_empty > 0 ? { refreshPoolEmpty: raw.pool_empty } : {}),
      ...(raw.collected > 0 ? { collected: raw.collected } : {}),
      sent: raw.sent,
      ranOut,
    },
  };
}

/**
 * Runs one wrk load of `duration` seconds (plus a separate, unrecorded warm-up run first when
 * `warmup` > 0) against each of `targets` at once (one wrk each, the connections split between
 * them), measuring the CPU time of each target's server over the measured run and sampling the
 * RSS of the first every 100 ms. `probe` is read before and after the measured run and turned into
 * per-request figures by `perRequest` (the database's). `spec` may differ per target and phase
 * (a pool of its own for each).
 * @param {{ targets: { url: string, pid?: number | undefined }[],
 *   spec: LoadSpec | ((target: number, phase: 'warmup' | 'run') => LoadSpec), specFile: string,
 *   connections: number, threads: number, duration: number, warmup?: number,
 *   probe?: () => Promise<Record<string, number>>,
 *   perRequest?: (before: Record<string, number>, after: Record<string, number>, requests: number) => Record<string, number> }} options
 * @returns {Promise<LoadResult & { rss?: number, perTarget?: LoadResult[] }>}
 */
export async function runWrk(options) {
  const { targets } = options;
  const connections = Math.max(1, Math.floor(options.connections / targets.length));
  const threads = Math.max(1, Math.min(options.threads, connections));
  /** @param {number} index @param {'warmup' | 'run'} phase @param {number} seconds */
  const once = (index, phase, seconds) => {
    const spec = typeof options.spec === 'function' ? options.spec(index, phase) : options.spec;
    const specFile = `${options.specFile}.${index}.${phase}`;
    writeFileSync(specFile, specText(spec, threads));
    return runWrkProcess(
      [
        ...['-t', String(threads), '-c', String(connections), '-d', `${seconds}s`],
        ...['--timeout', '10s', '--latency', '-s', WRK_SCRIPT],
        /** @type {{ url: string }} */ (targets[index]).url,
        '--',
        specFile,
      ],
      { specFile, threads, timeoutMs: (seconds + 60) * 1000 },
    );
  };
  const warmup = options.warmup ?? 0;
  if (warmup > 0) {
    const outputs = await Promise.all(targets.map((_, i) => once(i, 'warmup', warmup)));
    // The requests in flight when the warm-up stopped still run in the server: let them finish
    // (about its p99 latency) so that their CPU and statements do not count in the measured run.
    const p99 = Math.max(...outputs.map((stdout) => parseWrkOutput(stdout).latency.p99));
    await new Promise((resolve) => setTimeout(resolve, Math.min(5000, Math.max(200, p99 * 1.5))));
  }
  let rss = 0;
  const sampler = setInterval(() => {
    const now = memory(targets[0]?.pid);
    if (now !== undefined) rss = Math.max(rss, now.rss);
  }, 100);
  const probeBefore = await options.probe?.();
  const before = targets.map((t) => cpuSeconds(t.pid));
  let outputs;
  try {
    outputs = await Promise.all(targets.map((_, i) => once(i, 'run', options.duration)));
  } finally {
    clearInterval(sampler);
  }
  const after = targets.map((t) => cpuSeconds(t.pid));
  const probeAfter = await options.probe?.();
  const results = outputs.map((stdout, i) => {
    const result = parseWrkOutput(stdout);
    const b = before[i];
    const a = after[i];
    if (b !== undefined && a !== undefined && result.requests > 0)
      result.cpu.serverMicrosPerRequest = ((a - b) * 1e6) / result.requests;
    return result;
  });
  const result = results.length === 1 ? /** @type {LoadResult} */ (results[0]) : mergeResults(results);
  if (probeBefore !== undefined && probeAfter !== undefined && options.perRequest !== undefined) {
    result.detail.database = options.perRequest(probeBefore, probeAfter, result.requests);
  }
  return {
    ...result,
    ...(rss > 0 ? { rss } : {}),
    ...(results.length > 1 ? { perTarget: results } : {}),
  };
}

/**
 * Runs wrk to completion and returns its stdout. A thread of load.lua that is done (its pool used
 * up, or its share collected) leaves a marker file; once every thread has, wrk gets SIGINT, on
 * which it stops and prints its results as at the end of its duration.
 * @param {string[]} args @param {{ specFile: string, threads: number, timeoutMs: number }} options
 * @returns {Promise<string>}
 */
function runWrkProcess(args, options) {
  const markers = Array.from({ length: options.threads }, (_, i) => `${options.specFile}.stopped.${i}`);
  for (const marker of markers) rmSync(marker, { force: true });
  return new Promise((resolve, reject) => {
    const child = spawnCommand(WRK, args);
    /** @type {Buffer[]} */
    const out = [];
    /** @type {Buffer[]} */
    const err = [];
    child.stdout?.on('data', (chunk) => out.push(chunk));
    child.stderr?.on('data', (chunk) => err.push(chunk));
    child.stdin?.on('error', () => {});
    child.stdin?.end();
    let interrupted = false;
    const watcher = setInterval(() => {
      if (!interrupted && running(child) && markers.every((marker) => existsSync(marker))) {
        interrupted = true;
        child.kill('SIGINT');
      }
    }, 100);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearInterval(watcher);
      clearTimeout(timer);
      for (const marker of markers) rmSync(marker, { force: true });
      const stdout = Buffer.concat(out).toString('utf8');
      if (code === 0) resolve(stdout);
      else
        reject(
          new Error(
            `wrk ${args.join(' ')}: exited with ${code ?? signal}\n${Buffer.concat(err).toString('utf8')}`,
          ),
        );
    });
  });
}

/**
 * Loads run at the same time against several servers, as one: requests, rates and errors add up,
 * each latency percentile is the worst of them (an upper bound), the server CPU per request is the
 * total over the total.
 * @param {LoadResult[]} results
 * @returns {LoadResult}
 */
export function mergeResults(results) {
  const requests = results.reduce((n, r) => n + r.requests, 0);
  const worst = (/** @type {'p50' | 'p90' | 'p99' | 'max'} */ key) =>
    Math.max(...results.map((r) => r.latency[key]));
  const cpuKnown = results.every((r) => r.cpu.serverMicrosPerRequest !== undefined);
  return {
    requests,
    duration: Math.max(...results.map((r) => r.duration)),
    rps: results.reduce((n, r) => n + r.rps, 0),
    latency: { p50: worst('p50'), p90: worst('p90'), p99: worst('p99'), max: worst('max') },
    errors: results.reduce((n, r) => n + r.errors, 0),
    cpu: {
      client: results.reduce((n, r) => n + (r.cpu.client ?? 0), 0),
      ...(cpuKnown && requests > 0
        ? {
            serverMicrosPerRequest:
              results.reduce((n, r) => n + (r.cpu.serverMicrosPerRequest ?? 0) * r.requests, 0) / requests,
          }
        : {}),
    },
    detail: { ranOut: results.some((r) => r.detail.ranOut), perTarget: results.map((r) => r.detail) },
  };
}
