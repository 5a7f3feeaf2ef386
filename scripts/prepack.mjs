#!/usr/bin/env node
// The `prepack` of every published package (`pnpm pack` and `pnpm publish` run it in the package's
// folder): builds the package, then checks that each file its manifest points at (`exports` but
// their `source`, `bin`) is there, so that no tarball goes out without its dist/.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const manifest = JSON.parse(readFileSync('package.json', 'utf8'));

/** @param {unknown} value @returns {string[]} the files an `exports` value names, `source` aside */
const targets = (value) =>
  typeof value === 'string'
    ? [value]
    : value !== null && typeof value === 'object'
      ? Object.entries(value).flatMap(([condition, inner]) => (condition === 'source' ? [] : targets(inner)))
      : [];
const files = [
  ...targets(manifest.exports),
  ...(typeof manifest.bin === 'string' ? [manifest.bin] : Object.values(manifest.bin ?? {})),
];
const missing = () => files.filter((file) => !existsSync(file));

const run = (command, args) => execFileSync(command, args, { stdio: 'inherit' });
run(process.execPath, [fileURLToPath(new URL('build-js.mjs', import.meta.url))]);
run('tsc', ['-b', '--emitDeclarationOnly']);
// a dist/ removed by hand leaves tsc's build info saying the declarations are up to date
if (missing().length > 0) run('tsc', ['-b', '--emitDeclarationOnly', '--force']);
const absent = missing();
if (absent.length > 0) {
  console.error(`${manifest.name}: not packed: ${absent.join(', ')} missing after the build`);
  process.exit(1);
}
console.log(`${manifest.name}: built; ${files.length} files named by package.json are there`);
