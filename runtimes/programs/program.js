// What both runtime programs share: the name of the runtime they run on, their check, and how a
// program reports (one line, `OK <name> on <runtime>` or `FAIL …` with the exit status 1).

/** `deno 2.9.6`, `bun 1.4.5`, `node 24.9.0` or `a browser`. */
export const runtime = globalThis.Deno
  ? `deno ${globalThis.Deno.version.deno}`
  : globalThis.Bun
    ? `bun ${globalThis.Bun.version}`
    : globalThis.process?.versions?.node
      ? `node ${globalThis.process.versions.node}`
      : 'a browser';

/** Throws `what` unless `condition` holds. */
export function check(condition, what) {
  if (!condition) throw new Error(what);
}

/** Runs `main` and prints its one line; a failure also exits 1 where the runtime has an exit. */
export async function runProgram(name, main) {
  try {
    await main();
    console.log(`OK ${name} on ${runtime}`);
  } catch (error) {
    console.log(`FAIL ${name} on ${runtime}: ${error instanceof Error ? error.stack : String(error)}`);
    globalThis.process?.exit?.(1);
    globalThis.Deno?.exit(1);
  }
}
