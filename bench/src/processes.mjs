// Child processes of the benchmark: every one started here is stopped at exit, on SIGINT/SIGTERM
// and on errors.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** @type {Set<import('node:child_process').ChildProcess>} */
const children = new Set();

/**
 * Spawns `node` with `args`; stdout and stderr go to `logFile`, or are piped when it is undefined.
 * @param {string[]} args
 * @param {{ env?: NodeJS.ProcessEnv | undefined, cwd?: string, logFile?: string }} [options]
 */
export function spawnNode(args, options = {}) {
  return spawnCommand(process.execPath, args, options);
}

/**
 * Spawns `command` with `args`, like {@link spawnNode}: stopped with the others at the end.
 * @param {string} command @param {string[]} args
 * @param {{ env?: NodeJS.ProcessEnv | undefined, cwd?: string, logFile?: string }} [options]
 */
export function spawnCommand(command, args, options = {}) {
  const fd = options.logFile === undefined ? undefined : openSync(options.logFile, 'a');
  const child = spawn(command, args, {
    env: options.env ?? process.env,
    cwd: options.cwd,
    stdio: fd === undefined ? ['pipe', 'pipe', 'pipe'] : ['ignore', fd, fd],
  });
  if (fd !== undefined) closeSync(fd);
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Whether `child` is still running. */
export const running = (/** @type {import('node:child_process').ChildProcess} */ child) =>
  child.exitCode === null && child.signalCode === null;

/**
 * Stops `child`: SIGTERM, then SIGKILL after `graceMs`.
 * @param {import('node:child_process').ChildProcess} child
 */
export async function stop(child, graceMs = 5000) {
  if (!running(child)) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => {
    if (running(child)) child.kill('SIGKILL');
  }, graceMs);
  await exited;
  clearTimeout(timer);
}

/** Stops every child still running. */
export async function stopAll() {
  await Promise.all([...children].map((child) => stop(child)));
}

/** Last resort, synchronous (an `exit` handler cannot wait): SIGKILL whatever is left. */
export function killAllNow() {
  for (const child of children) {
    if (running(child)) child.kill('SIGKILL');
  }
}

/**
 * Runs node with `args` to completion: stdout as a string; rejects with stderr on a non-zero exit
 * or after `timeoutMs`.
 * @param {string[]} args
 * @param {{ env?: NodeJS.ProcessEnv, input?: string | undefined, timeoutMs?: number, what?: string }} [options]
 * @returns {Promise<string>}
 */
export function runNode(args, options = {}) {
  return runCommand(process.execPath, args, options);
}

/**
 * Runs `command` to completion, like {@link runNode}.
 * @param {string} command @param {string[]} args
 * @param {{ env?: NodeJS.ProcessEnv, input?: string | undefined, timeoutMs?: number, what?: string }} [options]
 * @returns {Promise<string>}
 */
export function runCommand(command, args, options = {}) {
  const what = options.what ?? [command, ...args].join(' ');
  return new Promise((resolve, reject) => {
    const child = spawnCommand(command, args, { env: options.env });
    /** @type {Buffer[]} */
    const out = [];
    /** @type {Buffer[]} */
    const err = [];
    child.stdout?.on('data', (chunk) => out.push(chunk));
    child.stderr?.on('data', (chunk) => err.push(chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what}: still running after ${options.timeoutMs} ms, killed`));
    }, options.timeoutMs ?? 60_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      if (code === 0) resolve(stdout);
      else reject(new Error(`${what}: exited with ${code ?? signal}\n${stderr.trim()}`));
    });
    // A command that exits without reading its input (wrk --version) must not fail the run.
    child.stdin?.on('error', () => {});
    child.stdin?.end(options.input ?? '');
  });
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Resident memory of process `pid` from /proc: current (VmRSS) and peak (VmHWM), in bytes;
 * undefined where /proc is missing (not Linux) or the process is gone.
 * @param {number | undefined} pid
 */
export function memory(pid) {
  if (pid === undefined) return undefined;
  let status;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (/** @type {string} */ field) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return match === null ? undefined : Number(match[1]) * 1024;
  };
  const rss = kb('VmRSS');
  const peak = kb('VmHWM');
  return rss === undefined || peak === undefined ? undefined : { rss, peak };
}

/**
 * Polls `url` until it answers 200, the child exits, or `timeoutMs` passes.
 * @param {string} url
 * @param {import('node:child_process').ChildProcess} child
 * @param {string} what
 */
export async function waitUntilReady(url, child, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!running(child))
      throw new Error(`${what} exited before it was ready (${child.exitCode ?? child.signalCode})`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} was not ready after ${timeoutMs} ms (${url})`);
}

/**
 * CPU seconds (user + system, all threads) process `pid` has used, from /proc/<pid>/stat;
 * undefined where /proc is missing or the process is gone.
 * @param {number | undefined} pid
 */
export function cpuSeconds(pid) {
  if (pid === undefined) return undefined;
  try {
    return parseCpuTicks(readFileSync(`/proc/${pid}/stat`, 'utf8')) / 100;
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds (user + system) of a process's main thread alone (in Node.js, the event loop), from
 * /proc/<pid>/task/<pid>/stat; undefined if it cannot be read.
 * @param {number | undefined} pid
 */
export function mainThreadCpuSeconds(pid) {
  if (pid === undefined) return undefined;
  try {
    return parseCpuTicks(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8')) / 100;
  } catch {
    return undefined;
  }
}

/**
 * utime + stime (clock ticks) from the text of a /proc/<pid>/stat file.
 * @param {string} stat
 */
export function parseCpuTicks(stat) {
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its `)`.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}
