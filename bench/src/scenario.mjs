// What every scenario shares: the servers, the wrk runs, the measurements and notes they leave.
import { appendFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { running } from './processes.mjs';
import { runWrk } from './wrk.mjs';

/**
 * @typedef {import('./wrk.mjs').LoadSpec} LoadSpec
 * @typedef {import('./wrk.mjs').LoadResult & { id: string, system: string, label: string, rss?: number,
 *   perTarget?: import('./wrk.mjs').LoadResult[] }} Measurement
 * @typedef {{ url: string, process: import('node:child_process').ChildProcess }} Server
 * @typedef {ReturnType<typeof createRunner>} Runner
 */

/**
 * @param {{ options: import('./cli.mjs').BenchOptions, tmp: string, log: (message: string) => void,
 *   servers: Record<string, Server>, database?: { probe: () => Promise<Record<string, number>>,
 *   perRequest: (b: Record<string, number>, a: Record<string, number>, n: number) => Record<string, number> } }} setup
 */
export function createRunner(setup) {
  const { options, tmp, log, servers } = setup;
  /** @type {Measurement[]} */
  const measurements = [];
  /** @type {string[]} */
  const notes = [];
  let count = 0;
  const wanted = (/** @type {string} */ id) => options.only === undefined || options.only.test(id);

  /**
   * Runs one measured load and records it.
   * @param {string} id @param {string} system a key of `servers` @param {string} label
   * @param {import('./wrk.mjs').SpecSource} spec
   * @param {{ warmup?: number, duration?: number, targets?: Server[] }} [overrides]
   */
  async function scenario(id, system, label, spec, overrides = {}) {
    const targets = overrides.targets ?? [/** @type {Server} */ (servers[system])];
    for (const target of targets) {
      if (!running(target.process)) throw new Error(`${system} is no longer running`);
    }
    log(`${id}: ${label}`);
    const isIdgate = system.startsWith('idgate');
    const result = await runWrk({
      targets: targets.map((t) => ({ url: t.url, pid: t.process.pid })),
      spec,
      specFile: join(tmp, `spec-${++count}.txt`),
      connections: options.connections,
      threads: options.threads,
      duration: overrides.duration ?? options.duration,
      warmup: overrides.warmup ?? options.warmup,
      ...(isIdgate && setup.database !== undefined
        ? { probe: setup.database.probe, perRequest: setup.database.perRequest }
        : {}),
    });
    for (const target of targets) {
      if (!running(target.process)) throw new Error(`${system} exited during ${id}`);
    }
    /** @type {Measurement} */
    const measurement = { id, system, label, ...result };
    measurements.push(measurement);
    const database = result.detail.database ?? {};
    log(
      `  ${result.rps.toFixed(0)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ` +
        `${result.errors} errors, ${result.cpu.serverMicrosPerRequest?.toFixed(0) ?? '—'} µs CPU/req` +
        (database.statements === undefined
          ? ''
          : `, ${database.statements.toFixed(2)} statements/req, PostgreSQL ${database.postgresCpuMicros?.toFixed(0) ?? '—'} µs CPU/req`),
    );
    if (result.requests === 0)
      notes.push(
        `${id}: no response completed within the ${overrides.duration ?? options.duration} s run ` +
          '(every request took longer: a loaded machine; raise --duration)',
      );
    if (result.errors > 0)
      notes.push(
        `${id}: ${result.errors} errors ${JSON.stringify({ ...result.detail, database: undefined })}`,
      );
    if (result.detail.ranOut) {
      notes.push(
        `${id}: its pool ran out after ${result.duration.toFixed(1)} s (the figures cover that time; ` +
          'raise --max-tokens for a full run)',
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    return measurement;
  }

  /**
   * Collects `count` values (a JSON field of each response, or a query parameter of its Location)
   * with a wrk load, appended to `file` one a line; the minting is not measured.
   * @param {string} what @param {Server} server @param {LoadSpec & { collect: NonNullable<LoadSpec['collect']> }} spec
   * @param {number} amount @param {string} file
   */
  async function mint(what, server, spec, amount, file) {
    if (amount <= 0) return 0;
    const started = Date.now();
    const part = `${file}.part`;
    const threads = Math.max(1, Math.min(options.threads, 32));
    const result = await runWrk({
      targets: [{ url: server.url }],
      spec: { ...spec, collect: { ...spec.collect, file: part, amount } },
      specFile: join(tmp, `spec-${++count}.txt`),
      connections: Math.min(options.connections, 32),
      threads,
      duration: 600,
    });
    let minted = 0;
    for (let i = 0; i < threads; i++) {
      const partFile = `${part}.${i}`;
      if (!existsSync(partFile)) continue;
      const text = readFileSync(partFile, 'utf8');
      minted += text.split('\n').filter(Boolean).length;
      appendFileSync(file, text);
      rmSync(partFile);
    }
    if (minted < amount * 0.95)
      throw new Error(`minting ${what}: got ${minted} of ${amount} (${JSON.stringify(result.detail)})`);
    log(`minted ${minted} ${what} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return minted;
  }

  return { options, tmp, log, servers, measurements, notes, wanted, scenario, mint };
}
