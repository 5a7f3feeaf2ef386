#!/usr/bin/env node
// The command npm and pnpm link as `kubectl-idgate`. It is a checked-in file (mode 755) rather
// than dist/bin.js itself so that `pnpm install` in a checkout links it before anything is built
// (pnpm links no bin whose file is missing); it runs the built plugin, or says how to build it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const plugin = new URL('../dist/bin.js', import.meta.url);
if (existsSync(plugin)) {
  await import(plugin.href);
} else {
  const checkout = fileURLToPath(new URL('../../..', import.meta.url)).replace(/\/$/, '');
  process.stderr.write(
    `kubectl-idgate: the plugin is not built (${fileURLToPath(plugin)} is missing): run \`pnpm build\` in ${checkout}\n`,
  );
  process.exitCode = 1;
}
