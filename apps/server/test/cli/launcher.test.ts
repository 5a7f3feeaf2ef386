import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const PACKAGE = fileURLToPath(new URL('../..', import.meta.url));
const ROOT = join(PACKAGE, '..', '..');
const LAUNCHER = join(PACKAGE, 'bin', 'idgate.js');

describe('the idgate command from a checkout', () => {
  it('is a launcher in Git, mode 755, so pnpm install links it before anything is built', () => {
    const manifest = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8'));
    expect(manifest.bin).toEqual({ idgate: './bin/idgate.js' });
    const staged = execFileSync('git', ['ls-files', '--stage', 'bin/idgate.js'], {
      cwd: PACKAGE,
      encoding: 'utf8',
    });
    expect(staged).toMatch(/^100755 /);
    expect(statSync(LAUNCHER).mode & 0o777).toBe(0o755);
    // The packages that depend on the server (the bench, the kubectl plugin's tests) get it linked.
    const linked = join(ROOT, 'bench', 'node_modules', '.bin', 'idgate');
    expect(statSync(linked).mode & 0o111).toBe(0o111);
    const version = spawnSync(linked, ['--version'], { encoding: 'utf8' });
    expect({ status: version.status, stdout: version.stdout }).toEqual({
      status: 0,
      stdout: `${manifest.version}\n`,
    });
  });

  it('in a checkout not built yet, says how to build it', () => {
    const checkout = mkdtempSync(join(tmpdir(), 'idgate-unbuilt-'));
    try {
      const bin = join(checkout, 'apps', 'server', 'bin');
      mkdirSync(bin, { recursive: true });
      copyFileSync(LAUNCHER, join(bin, 'idgate.js'));
      const result = spawnSync(process.execPath, [join(bin, 'idgate.js'), '--help'], { encoding: 'utf8' });
      expect(result.status).toBe(1);
      expect(result.stderr).toBe(
        `idgate: the server is not built (${join(checkout, 'apps', 'server', 'dist', 'bin.js')} is missing): run \`pnpm build\` in ${checkout}\n`,
      );
    } finally {
      rmSync(checkout, { recursive: true, force: true });
    }
  });
});
