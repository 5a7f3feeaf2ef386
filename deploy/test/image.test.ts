import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { accessSync, chownSync, constants, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
// Fully qualified: a short name can make podman ask which registry to use, and CI has no terminal.
const REGISTRY_BASES = {
  BUILD_IMAGE: 'docker.io/library/node:22-bookworm',
  RUNTIME_IMAGE: 'docker.io/library/node:22-bookworm-slim',
};
// What deploy/local-base/make.sh makes from Debian's archive and the npm registry, for a machine
// that reaches no container registry.
const LOCAL_BASES = {
  BUILD_IMAGE: 'localhost/idgate-base/node:22-bookworm',
  RUNTIME_IMAGE: 'localhost/idgate-base/node:22-bookworm-slim',
};
const TAG = `localhost/idgate:test-${process.pid}`;
const NAME = `idgate-test-${process.pid}`;
// Building takes minutes: `pnpm test` leaves it to .ci/run, which runs this file again after the
// suite with IDGATE_IMAGE_TEST=1 (`pnpm --filter @idgate/deploy test:image`).
const WANTED = process.env.IDGATE_IMAGE_TEST === '1';

/** podman, or buildah, from PATH: Debian's packages. */
function findBuilder(): string | undefined {
  for (const name of ['podman', 'buildah'])
    for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
      try {
        accessSync(join(dir, name), constants.X_OK);
        return join(dir, name);
      } catch {}
    }
  return undefined;
}

function run(command: string, args: string[], timeout: number) {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout, cwd: root });
  return { ok: result.status === 0, out: `${result.stdout ?? ''}${result.stderr ?? ''}`.trim() };
}

const lastLine = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .at(-1) ?? 'no output';

const exists = (builder: string, image: string) =>
  run(builder, builder.endsWith('buildah') ? ['inspect', image] : ['image', 'exists', image], 10_000).ok;

/** The base images to build on (locally made ones first), or why there are none. */
function findBases(builder: string | undefined): { bases: typeof REGISTRY_BASES } | { reason: string } {
  if (builder === undefined)
    return { reason: 'no image builder on this machine (install podman or buildah)' };
  if (Object.values(LOCAL_BASES).every((image) => exists(builder, image))) return { bases: LOCAL_BASES };
  for (const image of Object.values(REGISTRY_BASES)) {
    if (exists(builder, image)) continue;
    const pull = run(builder, ['pull', '--quiet', image], 120_000);
    if (!pull.ok)
      return {
        reason: `${builder} cannot get the base image ${image} (no container registry is reachable from here: ${lastLine(pull.out)}); make local ones with deploy/local-base/make.sh`,
      };
  }
  return { bases: REGISTRY_BASES };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/** The status `url` answers with once it answers, or 0: after a minute, or once `alive()` says the server exited. */
async function statusOf(url: string, alive: () => boolean = () => true): Promise<number> {
  for (let attempt = 0; attempt < 60 && alive(); attempt++) {
    const status = await fetch(url).then(
      (r) => r.status,
      () => 0,
    );
    if (status !== 0) return status;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return 0;
}

/**
 * Stops the server `buildah run` started in a chroot: SIGTERM, which it passes on, and then, since a
 * chrooted process is no child of ours, SIGKILL to any process still running the image's server
 * with this test's port.
 */
async function stopChrooted(server: ChildProcess, port: number): Promise<void> {
  server.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 2000));
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (environ.includes(`IDGATE_PORT=${port}`) && environ.includes('IDGATE_HOST=127.0.0.1'))
        process.kill(Number(pid), 'SIGKILL');
    } catch {}
  }
  server.kill('SIGKILL');
}

const builder = findBuilder();
const found = WANTED
  ? findBases(builder)
  : { reason: 'built by .ci/run after the suite (IDGATE_IMAGE_TEST=1)' };
const reason = 'reason' in found ? found.reason : undefined;
if (WANTED && reason !== undefined) console.warn(`notice: the image is not built: ${reason}`);

describe('deploy/Dockerfile, built and started', () => {
  let server: ChildProcess | undefined;
  let container: string | undefined;
  let serverPort = 0;
  let serverOutput = '';
  let exited: string | undefined;
  let dataDir: string | undefined;
  afterAll(async () => {
    if (server !== undefined) await stopChrooted(server, serverPort);
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
    if (builder !== undefined && reason === undefined) {
      if (container !== undefined) run('buildah', ['rm', container], 60_000);
      if (builder.endsWith('podman')) run(builder, ['rm', '--force', '--ignore', NAME], 60_000);
      run(builder, ['rmi', '--force', TAG], 60_000);
    }
  });

  it('builds with the pinned pnpm and answers /healthz, /readyz and discovery as uid 10001', async (context) => {
    if (reason !== undefined || !('bases' in found)) return context.skip(reason);
    const buildArgs = Object.entries(found.bases).flatMap(([name, image]) => [
      '--build-arg',
      `${name}=${image}`,
    ]);
    // chroot isolation: RUN steps need no OCI runtime (which a sandbox without cgroup controllers refuses).
    const build = run(
      builder as string,
      ['build', '--isolation', 'chroot', '--file', 'deploy/Dockerfile', ...buildArgs, '--tag', TAG, '.'],
      1_200_000,
    );
    expect(build.ok, build.out.slice(-4000)).toBe(true);
    const port = await freePort();
    serverPort = port;
    const started = builder?.endsWith('podman')
      ? run(builder, ['run', '--detach', '--name', NAME, '--publish', `127.0.0.1:${port}:8080`, TAG], 60_000)
      : { ok: false, out: 'buildah runs no containers' };
    let base = `http://127.0.0.1:${port}`;
    if (!started.ok) {
      // No container runtime works here (crun may not set rlimits in a sandbox): run the image's
      // entrypoint in a chroot of its filesystem instead, as its user, on the host's network.
      console.warn(`notice: the image runs in a chroot, not a container: ${lastLine(started.out)}`);
      container = run('buildah', ['from', TAG], 60_000).out.split('\n').at(-1);
      // The data directory is a volume, as in Kubernetes: a host directory owned by the image's uid
      // (what buildah would put there is not the same from one version or storage driver to another).
      dataDir = mkdtempSync(join(tmpdir(), 'idgate-image-data-'));
      chownSync(dataDir, 10001, 10001);
      const inImage = (args: string[], env: string[] = []) => [
        'run',
        '--isolation',
        'chroot',
        '--network',
        'host',
        '--volume',
        `${dataDir}:/var/lib/idgate:rw`,
        ...env.flatMap((e) => ['--env', e]),
        container as string,
        '--',
        ...args,
      ];
      const who = run(
        'buildah',
        inImage([
          'node',
          '-e',
          'process.stdout.write(process.getuid() + " " + require("./package.json").name)',
        ]),
        60_000,
      );
      expect(who.out).toBe('10001 @idgate/server');
      const { OCIv1 } = JSON.parse(run('buildah', ['inspect', '--type', 'image', TAG], 10_000).out) as {
        OCIv1: { config: { Entrypoint: string[] } };
      };
      const entrypoint = OCIv1.config.Entrypoint;
      server = spawn(
        'buildah',
        inImage([...entrypoint, 'serve'], [`IDGATE_PORT=${port}`, 'IDGATE_HOST=127.0.0.1']),
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      const chrooted = server;
      chrooted.stdout?.on('data', (chunk: Buffer) => {
        serverOutput += chunk.toString();
      });
      chrooted.stderr?.on('data', (chunk: Buffer) => {
        serverOutput += chunk.toString();
      });
      chrooted.once('exit', (code, signal) => {
        exited = `exited (${signal ?? code})`;
      });
      base = `http://127.0.0.1:${port}`;
    } else {
      const who = run(
        builder as string,
        ['exec', NAME, 'node', '-e', 'process.stdout.write(String(process.getuid()))'],
        60_000,
      );
      expect(who.out).toBe('10001');
    }
    const healthz = await statusOf(`${base}/healthz`, () => exited === undefined);
    // What the server printed is what tells why it does not answer.
    expect(healthz, `the server ${exited ?? 'did not answer'}:\n${serverOutput.slice(-4000)}`).toBe(200);
    expect(await statusOf(`${base}/readyz`)).toBe(200);
    const discovery = (await (await fetch(`${base}/oauth/.well-known/openid-configuration`)).json()) as {
      issuer: string;
    };
    expect(discovery.issuer).toMatch(/\/oauth$/);
  }, 1_500_000);

  it('pins pnpm to the workspace version and takes base images by argument (for tag@digest)', () => {
    const dockerfile = readFileSync(join(root, 'deploy/Dockerfile'), 'utf8');
    const { packageManager } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      packageManager: string;
    };
    expect(dockerfile).toContain(`npm install --global ${packageManager}`);
    expect(dockerfile).toMatch(/^FROM \$\{BUILD_IMAGE\} AS build$/m);
    expect(dockerfile).toMatch(/^FROM \$\{RUNTIME_IMAGE\} AS runtime$/m);
    // A digest is never written from memory: only a registry can say it. The file says how to pin.
    expect(dockerfile).not.toMatch(/sha256:[0-9a-f]{64}/);
    expect(dockerfile).toContain('--build-arg BUILD_IMAGE=node:22-bookworm@sha256:<digest>');
  });
});
