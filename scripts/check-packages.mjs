#!/usr/bin/env node
// What a user gets from npm: packs every published package (its `prepack` builds it and checks its
// files), installs the tarballs with npm into a scratch project (their other dependencies come
// from the registry, none of @idgate/* does), and runs what a user runs first: each package
// README's example, against a real idgate (the checkout's built server, on a free loopback port),
// and `kubectl-idgate --help` from node_modules/.bin. CI runs it after the tests (.ci/run);
// `pnpm check:packages` runs it by hand (after `pnpm build`). Needs the npm registry.
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { transform } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER_BIN = join(ROOT, 'apps/server/dist/bin.js');

/** The published packages and what their README's example must print or answer. */
const PACKAGES = [
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
let server;
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
  await exec(
    'npm',
    ['install', '--no-audit', '--no-fund', '--loglevel=error', ...packed.map((p) => p.filename)],
    { cwd: project, maxBuffer: 16 * 1024 * 1024 },
  );
  const lock = JSON.parse(await readFile(join(project, 'package-lock.json'), 'utf8'));
  for (const { name } of packed) {
    const resolved = lock.packages[`node_modules/${name}`]?.resolved ?? '';
    check(
      resolved.startsWith('file:'),
      `${name}: installed from its tarball, not the registry (${resolved})`,
    );
  }

  // 3. a real idgate for the examples that call one
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const serverDir = join(scratch, 'server');
  await mkdir(serverDir);
  const serverEnv = {
    PATH: process.env.PATH,
    HOME: serverDir,
    IDGATE_PORT: String(port),
    IDGATE_HOST: '127.0.0.1',
    IDGATE_ISSUER: `${url}/oauth`,
  };
  const init = JSON.parse(
    (await exec(process.execPath, [SERVER_BIN, 'init', '--json'], { cwd: serverDir, env: serverEnv })).stdout,
  );
  server = spawn(process.execPath, [SERVER_BIN, 'serve'], {
    cwd: serverDir,
    env: serverEnv,
    stdio: 'ignore',
  });
  await ready(`${url}/readyz`);

  // 4. each README's example, as a user copies it
  for (const { dir, expect } of PACKAGES) {
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
  const help = await runNode([], { cwd: project, file: bin });
  check(help.code === 0 && /^Usage:\n/.test(help.stderr), 'kubectl-idgate (no arguments): the usage, exit 0');
  for (const command of ['--help', 'get-token --help', 'setup --help', 'logout --help']) {
    const run = await runNode(command.split(' '), { cwd: project, file: bin });
    check(run.code === 0 && /^Usage:\n/.test(run.stdout), `kubectl-idgate ${command}: exit ${run.code}`);
  }
} finally {
  server?.kill('SIGTERM');
  if (server && server.exitCode === null) await new Promise((resolve) => server.once('exit', resolve));
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

/** Waits (at most 30 s, asking every 100 ms) until `url` answers 200. */
async function ready(url) {
  const until = Date.now() + 30_000;
  for (;;) {
    if ((await fetch(url).catch(() => undefined))?.status === 200) return;
    if (Date.now() > until) throw new Error(`idgate did not become ready at ${url}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
