#!/usr/bin/env node
// What a user gets from npm: packs every published package (its `prepack` builds it and checks its
// files), installs the tarballs with npm into a scratch project outside the checkout (their other
// dependencies come from the registry, none of @idgate/* does; better-sqlite3 and argon2 are
// compiled there, as on a machine that cannot download their prebuilt binaries), and runs what a
// user runs first, with only node, npm, npx and sh on PATH: `npx idgate --help`, `npx idgate init`,
// `npx idgate serve` (its pages, assets, discovery and OpenAPI answer, Ctrl-C stops it), each
// package README's example against that idgate, and `kubectl-idgate --help`. CI runs it after the
// tests (.ci/run); `pnpm check:packages` runs it by hand. Needs the npm registry; takes two to four
// minutes, most of it compiling better-sqlite3.
import { execFile, spawn } from 'node:child_process';
import { access, constants, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { transform } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The published packages and what their README's example must print or answer. */
const PACKAGES = [
  // its README shows the idgate command, which step 3 runs
  { dir: 'apps/server' },
  {
    dir: 'packages/schema',
    expect: {
      code: 0,
      stdout: /^http:\/\/127\.0\.0\.1:\d+\/oauth \S+\/oauth\/token\n$/,
      stderr: /^username "no spaces": /,
    },
  },
  { dir: 'packages/core', expect: { code: 0, stdout: /^admin idg_\S+ cl_\S+\n$/ } },
  { dir: 'packages/sdk', expect: { code: 0 } },
  // its example asks id.example.com, which is no idgate: it runs and says so in one line
  {
    dir: 'apps/kubectl-idgate',
    expect: {
      code: 1,
      stderr: /^kubectl-idgate: cannot reach the issuer https:\/\/id\.example\.com\/oauth: .+\n$/,
    },
  },
];

const exec = promisify(execFile);
const failures = [];
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
};

const scratch = await mkdtemp(join(tmpdir(), 'idgate-packages-'));
/** npx idgate serve, while it runs */
let serving;
try {
  // 1. pack
  const tarballs = join(scratch, 'tarballs');
  await mkdir(tarballs);
  const packed = [];
  for (const { dir } of PACKAGES) {
    const { stdout } = await exec('pnpm', ['pack', '--json', '--pack-destination', tarballs], {
      cwd: join(ROOT, dir),
      maxBuffer: 16 * 1024 * 1024,
    });
    // prepack's own lines come first: the JSON document is the end of stdout
    const result = JSON.parse(stdout.slice(stdout.indexOf('{\n')));
    check(
      result.files.some((file) => file.path.startsWith('dist/')),
      `${result.name}: packed with dist/ (${result.files.length} files)`,
    );
    packed.push(result);
  }

  // 2. install with npm, as a user would
  const project = join(scratch, 'project');
  await mkdir(project);
  await writeFile(
    join(project, 'package.json'),
    '{ "name": "scratch", "private": true, "type": "module" }\n',
  );
  const installStarted = performance.now();
  await exec(
    'npm',
    ['install', '--no-audit', '--no-fund', '--loglevel=error', ...packed.map((p) => p.filename)],
    {
      cwd: project,
      maxBuffer: 16 * 1024 * 1024,
      // better-sqlite3 would first try to download a prebuilt binary from GitHub: compile it (and
      // argon2) from source, as where GitHub cannot be reached (needs python3, make, a C++ compiler
      // and Node's headers: npm's `nodedir`, or node-gyp downloads them), on every core (JOBS).
      env: { ...process.env, npm_config_build_from_source: 'true', JOBS: 'max' },
    },
  );
  console.log(`     npm install: ${Math.round((performance.now() - installStarted) / 1000)} s`);
  const lock = JSON.parse(await readFile(join(project, 'package-lock.json'), 'utf8'));
  for (const { name } of packed) {
    const resolved = lock.packages[`node_modules/${name}`]?.resolved ?? '';
    check(
      resolved.startsWith('file:'),
      `${name}: installed from its tarball, not the registry (${resolved})`,
    );
  }

  // 3. the idgate command, as npm linked it: a PATH of node, npm, npx and sh alone (no pnpm, no
  // checkout), and `npx --yes=false` (`--no`) so that a missing link fails rather than fetching a package named
  // idgate
  const path = join(scratch, 'path');
  await mkdir(path);
  for (const command of ['node', 'npm', 'npx', 'sh']) {
    const found = command === 'node' ? process.execPath : await which(command);
    await symlink(found, join(path, command));
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const serverDir = join(scratch, 'server');
  await mkdir(serverDir);
  const serverEnv = {
    PATH: path,
    HOME: serverDir,
    npm_config_update_notifier: 'false',
    IDGATE_PORT: String(port),
    IDGATE_HOST: '127.0.0.1',
    IDGATE_ISSUER: `${url}/oauth`,
    IDGATE_DATABASE_URL: `sqlite:${join(serverDir, 'idgate.db')}`,
  };
  const npx = (args) =>
    runNode(['--yes=false', 'idgate', ...args], { cwd: project, env: serverEnv, file: join(path, 'npx') });
  const server = JSON.parse(await readFile(join(ROOT, 'apps/server/package.json'), 'utf8'));
  const help = await npx(['--help']);
  check(help.code === 0 && /^Usage: idgate /.test(help.stdout), `npx idgate --help: exit ${help.code}`);
  const version = await npx(['--version']);
  check(version.stdout.trim() === server.version, `npx idgate --version: ${version.stdout.trim()}`);
  const initRun = await npx(['init', '--json']);
  let init = {};
  try {
    init = JSON.parse(initRun.stdout);
  } catch {}
  check(
    initRun.code === 0 && init.apiKey?.startsWith('idg_') && init.issuer === `${url}/oauth`,
    `npx idgate init --json: exit ${initRun.code}, an admin API key${initRun.code === 0 ? '' : `; stderr: ${initRun.stderr.trim()}`}`,
  );
  // its own process group, as in a terminal, where Ctrl-C reaches npx and the server alike
  const serveStarted = performance.now();
  serving = spawn(join(path, 'npx'), ['--yes=false', 'idgate', 'serve'], {
    cwd: project,
    env: serverEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let log = '';
  serving.stdout.on('data', (chunk) => {
    log += chunk;
  });
  serving.stderr.on('data', (chunk) => {
    log += chunk;
  });
  const exited = new Promise((resolve) => serving.once('exit', (code, signal) => resolve({ code, signal })));
  await ready(`${url}/readyz`, exited, () => log);
  console.log(`     npx idgate serve: ready in ${Math.round(performance.now() - serveStarted)} ms`);
  for (const [route, type, body] of [
    ['/healthz', 'application/json', undefined],
    ['/oauth/.well-known/openid-configuration', 'application/json', `"issuer":"${url}/oauth"`],
    ['/openapi.json', 'application/json', `"version":"${server.version}"`],
    ['/oauth/device', 'text/html', '<h1>Connect a device</h1>'],
    ['/oauth/assets/idgate.css', 'text/css', '.card'],
  ]) {
    const response = await fetch(`${url}${route}`);
    const text = await response.text();
    check(
      response.status === 200 &&
        (response.headers.get('content-type') ?? '').startsWith(type) &&
        (body === undefined || text.includes(body)),
      `npx idgate serve: GET ${route} answers ${response.status} ${response.headers.get('content-type')}`,
    );
  }

  // 4. each README's example, as a user copies it
  for (const { dir, expect } of PACKAGES) {
    if (expect === undefined) continue;
    const name = JSON.parse(await readFile(join(ROOT, dir, 'package.json'), 'utf8')).name;
    const readme = await readFile(join(ROOT, dir, 'README.md'), 'utf8');
    const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    if (example === undefined) {
      check(false, `${name}: README has a ts example`);
      continue;
    }
    const { code } = await transform(example.replaceAll('http://localhost:8080', url), {
      loader: 'ts',
      format: 'esm',
      target: 'es2022',
    });
    const file = join(project, `example-${name.replace('@idgate/', '')}.mjs`);
    await writeFile(file, code);
    const run = await runNode([file], { cwd: project, env: { ...serverEnv, IDGATE_API_KEY: init.apiKey } });
    check(
      run.code === expect.code &&
        (expect.stdout === undefined || expect.stdout.test(run.stdout)) &&
        (expect.stderr === undefined || expect.stderr.test(run.stderr)),
      `${name}: the README's example runs (exit ${run.code}${run.stderr ? `; stderr: ${run.stderr.trim().split('\n')[0]}` : ''})`,
    );
  }

  // 5. the plugin's command, linked by npm
  const bin = join(project, 'node_modules/.bin/kubectl-idgate');
  const usage = await runNode([], { cwd: project, file: bin });
  check(
    usage.code === 0 && /^Usage:\n/.test(usage.stderr),
    'kubectl-idgate (no arguments): the usage, exit 0',
  );
  for (const command of ['--help', 'get-token --help', 'setup --help', 'logout --help']) {
    const run = await runNode(command.split(' '), { cwd: project, file: bin });
    check(run.code === 0 && /^Usage:\n/.test(run.stdout), `kubectl-idgate ${command}: exit ${run.code}`);
  }

  // 6. Ctrl-C: npx ends at once, the server shuts down gracefully and exits, its port is free
  const stopStarted = performance.now();
  process.kill(-serving.pid, 'SIGINT');
  const gone = await groupGone(serving.pid, 20_000);
  const closed = (await fetch(`${url}/healthz`).catch(() => undefined)) === undefined;
  check(
    gone && /"msg":"shutting down"/.test(log) && !/shutdown failed/.test(log) && closed,
    `npx idgate serve: Ctrl-C stops it (${gone ? 'every process gone' : 'still running after 20 s'} in ${Math.round(performance.now() - stopStarted)} ms; port ${closed ? 'closed' : 'still open'})`,
  );
  serving = undefined;
} finally {
  if (serving !== undefined) {
    try {
      process.kill(-serving.pid, 'SIGKILL');
    } catch {}
  }
  await rm(scratch, { recursive: true, force: true });
}
console.log(failures.length === 0 ? 'every package installs and runs' : `${failures.length} check(s) failed`);
process.exitCode = failures.length === 0 ? 0 : 1;

/** Runs node (or `file`) with `args`, at most a minute; answers the exit code and output. */
function runNode(args, { cwd, env = { PATH: process.env.PATH, HOME: cwd }, file }) {
  return new Promise((resolve, reject) => {
    const child = spawn(file ?? process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Waits (at most 30 s, asking every 100 ms) until `url` answers 200; throws, with the server's
 * output, if it exits first or takes longer.
 */
async function ready(url, exited, output) {
  let exit;
  exited.then((value) => {
    exit = value;
  });
  const until = Date.now() + 30_000;
  for (;;) {
    if ((await fetch(url).catch(() => undefined))?.status === 200) return;
    if (exit !== undefined)
      throw new Error(`idgate exited (${exit.code ?? exit.signal}) before it was ready:\n${output()}`);
    if (Date.now() > until) throw new Error(`idgate did not become ready at ${url}:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits (at most `ms`) until no process of the group `pgid` is left; answers whether none is. */
async function groupGone(pgid, ms) {
  const until = Date.now() + ms;
  for (;;) {
    try {
      process.kill(-pgid, 0);
    } catch (error) {
      if (error.code === 'ESRCH') return true;
      throw error;
    }
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The file `command` names on PATH. */
async function which(command) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const file = join(dir, command);
    const executable = await access(file, constants.X_OK).then(
      () => true,
      () => false,
    );
    if (executable) return file;
  }
  throw new Error(`${command} is not on PATH`);
}
