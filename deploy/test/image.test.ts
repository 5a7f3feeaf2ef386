import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
// Fully qualified: a short name can make podman ask which registry to use, and CI has no terminal.
const BASES = {
  BUILD_IMAGE: 'docker.io/library/node:24-bookworm',
  RUNTIME_IMAGE: 'docker.io/library/node:24-bookworm-slim',
};
const TAG = `localhost/idgate:test-${process.pid}`;

/** podman, or buildah (build only), from PATH: Debian's packages. */
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

/** Why the image cannot be built on this machine, or undefined when it can. */
function whyNoBuild(builder: string | undefined): string | undefined {
  if (builder === undefined) return 'no image builder on this machine (install podman or buildah)';
  for (const image of Object.values(BASES)) {
    if (
      run(builder, builder.endsWith('buildah') ? ['inspect', image] : ['image', 'exists', image], 10_000).ok
    )
      continue;
    const pull = run(builder, ['pull', '--quiet', image], 120_000);
    if (!pull.ok) {
      const line =
        pull.out
          .split('\n')
          .filter((l) => l.trim() !== '')
          .at(-1) ?? 'no output';
      return `${builder} cannot get the base image ${image} (no container registry is reachable from here): ${line}`;
    }
  }
  return undefined;
}

const builder = findBuilder();
const reason = whyNoBuild(builder);
if (reason !== undefined) console.warn(`notice: the image is not built: ${reason}`);

describe('deploy/Dockerfile, built and started', () => {
  afterAll(() => {
    if (builder !== undefined && reason === undefined) {
      run(builder, ['rm', '--force', '--ignore', `idgate-test-${process.pid}`], 60_000);
      run(builder, ['rmi', '--force', TAG], 60_000);
    }
  });

  it('builds with the pinned pnpm and answers /healthz as a container', async (context) => {
    if (reason !== undefined) context.skip(reason);
    const buildArgs = Object.entries(BASES).flatMap(([name, image]) => ['--build-arg', `${name}=${image}`]);
    const build = run(
      builder as string,
      ['build', '--file', 'deploy/Dockerfile', ...buildArgs, '--tag', TAG, '.'],
      1_200_000,
    );
    expect(build.ok, build.out.slice(-4000)).toBe(true);
    if (builder?.endsWith('buildah')) return; // buildah builds; it does not run containers.
    const pnpm = run(
      builder as string,
      [
        'run',
        '--rm',
        '--entrypoint',
        'node',
        TAG,
        '-e',
        "process.stdout.write(require('./package.json').name)",
      ],
      60_000,
    );
    expect(pnpm.out).toBe('@idgate/server');
    const started = run(
      builder as string,
      ['run', '--detach', '--name', `idgate-test-${process.pid}`, '--publish', '127.0.0.1::8080', TAG],
      60_000,
    );
    expect(started.ok, started.out).toBe(true);
    const port = run(builder as string, ['port', `idgate-test-${process.pid}`, '8080'], 10_000)
      .out.split(':')
      .at(-1);
    let status = 0;
    for (let attempt = 0; attempt < 60 && status !== 200; attempt++) {
      status = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.status,
        () => 0,
      );
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    expect(status).toBe(200);
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
    expect(dockerfile).toContain('--build-arg BUILD_IMAGE=node:24-bookworm@sha256:<digest>');
  });
});
