#!/usr/bin/env node
// The command npm and pnpm link as `idgate`. It is a checked-in file (mode 755) rather than
// dist/bin.js itself so that `pnpm install` in a checkout links it before anything is built (pnpm
// links no bin whose file is missing, and warns); it runs the built CLI, or says how to build it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/bin.js', import.meta.url);
if (existsSync(cli)) {
  await import(cli.href);
} else {
  const checkout = fileURLToPath(new URL('../../..', import.meta.url)).replace(/\/$/, '');
  process.stderr.write(
    `idgate: the server is not built (${fileURLToPath(cli)} is missing): run \`pnpm build\` in ${checkout}\n`,
  );
  process.exitCode = 1;
}
