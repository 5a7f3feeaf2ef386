import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CannedIdgate, startCannedIdgate } from './idgate-api.js';

const run = promisify(execFile);
const root = dirname(dirname(fileURLToPath(import.meta.url)));
const program = (name: string) => join(root, 'programs', name);

interface Runtime {
  name: string;
  /** How the programs name it, and its version: they print both. */
  kind: 'node' | 'bun' | 'deno';
  version: string;
  /** The executable; installed by `pnpm install` (devDependencies of this package and of node-24/). */
  binary: string;
  /** What comes before the program's path on the command line. */
  args: string[];
}

/** The version of the runtime an npm package (under `dir`) installs, or `missing`. */
function packageVersion(dir: string): string {
  const manifest = join(dir, 'package.json');
  return existsSync(manifest)
    ? (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version
    : 'missing';
}

const modules = join(root, 'node_modules');
const RUNTIMES: Runtime[] = [
  // The Node running these tests: the engines floor (20.19) where CI runs.
  {
    name: `Node ${process.versions.node.split('.')[0]}`,
    kind: 'node',
    version: process.versions.node,
    binary: process.execPath,
    args: [],
  },
  {
    name: 'Node 24',
    kind: 'node',
    version: packageVersion(join(root, 'node-24', 'node_modules', 'node')),
    binary: join(root, 'node-24', 'node_modules', 'node', 'bin', 'node'),
    args: [],
  },
  {
    name: 'Bun',
    kind: 'bun',
    version: packageVersion(join(modules, 'bun')),
    binary: join(modules, 'bun', 'bin', 'bun.exe'),
    args: [],
  },
  {
    name: 'Deno',
    kind: 'deno',
    version: packageVersion(join(modules, 'deno')),
    binary: join(modules, 'deno', 'deno'),
    // The packages come from node_modules; Deno may reach loopback only, fetch nothing, write no lock file.
    args: ['run', '--allow-net=127.0.0.1', '--no-prompt', '--cached-only', '--no-lock'],
  },
];

const installed = RUNTIMES.filter((runtime) => existsSync(runtime.binary));
const missing = RUNTIMES.filter((runtime) => !existsSync(runtime.binary));
if (missing.length > 0 && !process.env.CI) {
  console.warn(
    `runtime tests skipped for ${missing.map((r) => r.name).join(', ')}: not installed (run pnpm install)`,
  );
}

async function runProgram(runtime: Runtime, name: string, ...args: string[]) {
  const { stdout } = await run(runtime.binary, [...runtime.args, program(name), ...args], {
    cwd: root,
    timeout: 60_000,
    // Bun and Deno keep what they cache in the user's home, as they would for a user.
    env: { ...process.env, NO_COLOR: '1' },
  }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(`${runtime.name}: ${error.stdout ?? ''}${error.stderr ?? ''}${error.message}`);
  });
  return stdout.trim();
}

describe('core, the SDK and the schemas on every runtime', () => {
  let api: CannedIdgate;
  beforeAll(async () => {
    api = await startCannedIdgate();
  });
  afterAll(async () => {
    await api?.close();
  });

  if (process.env.CI) {
    it.each(missing)('has $name installed', ({ name, binary }) => {
      expect.fail(`${name} is missing at ${binary}: pnpm install installs it`);
    });
  }

  describe.each(installed)('$name', (runtime) => {
    it('issues, verifies and reviews a token with core over the in-memory ports', async () => {
      const output = await runProgram(runtime, 'core.js');
      expect(output).toBe(`OK core on ${runtime.kind} ${runtime.version}`);
    });

    it('reads discovery, JWKS and TokenReview answers through the SDK, validated', async () => {
      const output = await runProgram(runtime, 'sdk.js', api.baseUrl);
      expect(output).toBe(`OK sdk on ${runtime.kind} ${runtime.version}`);
    });
  });
});
