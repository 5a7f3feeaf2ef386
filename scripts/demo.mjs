#!/usr/bin/env node
// `pnpm demo`: idgate and the example web application (examples/web), signed in within minutes of a
// clone. It emits the server's JavaScript (as `pnpm start` does), keeps the demo's database, secret
// and settings in ./data/demo (its own, apart from `pnpm start`'s ./data), creates a demo user, a
// cluster and the application's client the first time (`idgate init --demo`), starts both, and says
// what to open. Ctrl-C stops both.
//
//   node scripts/demo.mjs [--no-build]
//   IDGATE_PORT (8080), DEMO_APP_PORT (3000) and DEMO_DATA_DIR (./data/demo) move it.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const root = resolve(import.meta.dirname, '..');
const { values } = parseArgs({ options: { 'no-build': { type: 'boolean', default: false } } });
const port = process.env.IDGATE_PORT || '8080';
const appPort = process.env.DEMO_APP_PORT || '3000';
const dataDir = resolve(process.env.DEMO_DATA_DIR || join(root, 'data', 'demo'));
const envFile = join(dataDir, 'app.env');
const bin = join(root, 'apps', 'server', 'dist', 'bin.js');
const show = (path) => relative(process.cwd(), path) || '.';

if (!values['no-build']) {
  const built = spawnSync(
    process.execPath,
    [join(root, 'scripts', 'build-js.mjs'), '--with-deps', 'apps/server'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
  if (built.status !== 0) process.exit(built.status ?? 1);
}
mkdirSync(dataDir, { recursive: true, mode: 0o700 });
const env = {
  ...process.env,
  IDGATE_PORT: port,
  IDGATE_HOST: '127.0.0.1',
  IDGATE_ISSUER: `http://localhost:${port}/oauth`,
  IDGATE_DATABASE_URL: `sqlite:${join(dataDir, 'idgate.db')}`,
};

if (!existsSync(envFile)) {
  const init = spawnSync(
    process.execPath,
    [bin, 'init', '--demo', '--app-url', `http://localhost:${appPort}`, '--app-env', envFile, '--json'],
    { env, encoding: 'utf8' },
  );
  if (init.status !== 0) {
    process.stderr.write(init.stderr);
    console.error(
      `idgate init --demo failed. If ${show(dataDir)} holds an earlier demo without ${show(envFile)}, remove the folder and run again.`,
    );
    process.exit(1);
  }
}
/** The example application's settings, as `node --env-file` reads them. */
const settings = Object.fromEntries(
  readFileSync(envFile, 'utf8')
    .split('\n')
    .filter((line) => /^[A-Z_]+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
);

const log = createWriteStream(join(dataDir, 'server.log'), { flags: 'a' });
const children = [];
function start(name, args, childEnv) {
  const child = spawn(process.execPath, args, { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  child.on('exit', (code, signal) => {
    if (stopping) return;
    console.error(`${name} stopped (${signal ?? `exit code ${code}`}); its output is in ${show(log.path)}`);
    stop(1);
  });
  children.push(child);
  return child;
}
let stopping = false;
function stop(code) {
  stopping = true;
  for (const child of children) child.kill('SIGTERM');
  Promise.all(
    children.map((child) => (child.exitCode === null ? new Promise((r) => child.on('exit', r)) : null)),
  ).then(() => process.exit(code));
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

start('idgate', [bin, 'serve'], env);
const base = `http://127.0.0.1:${port}`;
for (let attempt = 0; ; attempt++) {
  const ready = await fetch(`${base}/readyz`).then(
    (response) => response.ok,
    () => false,
  );
  if (ready || stopping) break;
  if (attempt === 300) {
    console.error(
      `idgate did not become ready on ${base} within a minute; its output is in ${show(log.path)}`,
    );
    stop(1);
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
}
if (!stopping)
  start('the example application', [join(root, 'examples', 'web', 'server.mjs')], {
    ...process.env,
    ...settings,
  });
const appUrl = settings.DEMO_APP_URL;
for (;;) {
  const up = await fetch(appUrl.replace('localhost', '127.0.0.1')).then(
    () => true,
    () => false,
  );
  if (up || stopping) break;
  await new Promise((resolve) => setTimeout(resolve, 100));
}
if (!stopping)
  console.log(`
idgate demo is running.

  Open ${appUrl} and sign in as ${settings.DEMO_USERNAME}, password ${settings.DEMO_PASSWORD}

  idgate:        http://localhost:${port}  (issuer ${env.IDGATE_ISSUER})
  discovery:     ${env.IDGATE_ISSUER}/.well-known/openid-configuration
  demo data:     ${show(dataDir)} (its settings and secrets in ${show(envFile)}; remove the folder to start over)
  server output: ${show(log.path)}

Ctrl-C stops both. Next: docs/getting-started.md.`);
