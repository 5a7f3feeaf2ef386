// The flags of `pnpm bench` (see ../README.md).
import { join } from 'node:path';
import { parseArgs } from 'node:util';

/**
 * How idgate runs in production (deploy/Dockerfile, `pnpm start`): `gc` exposed for the idle
 * compaction, an 8 MiB young-generation semi-space, and glibc malloc with a fixed mmap threshold
 * so argon2id's 19 MiB buffers go back to the system when a sign-in ends. A test keeps the three
 * places in step.
 */
export const IDGATE_NODE_FLAGS = ['--expose-gc', '--max-semi-space-size=8'];
export const IDGATE_MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' };

export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

export const USAGE = `usage: pnpm bench -- [options]   (or: node bench/src/run.mjs [options])

  --duration <s>        measured seconds per scenario (default 5)
  --warmup <s>          warm-up seconds before each (default 1)
  --connections <n>     concurrent connections (default 64)
  --threads <n>         wrk threads (default 2)
  --alg <alg>           idgate signing algorithm: RS256, ES256 or EdDSA (default RS256)
  --database <db>       sqlite (default) or postgres: on PostgreSQL the write paths run too
                        (refresh rotation, authorization_code exchange, device-code polls)
  --postgres <url>      the PostgreSQL server (implies --database postgres; default
                        $IDGATE_TEST_DATABASE_URL or ${DEFAULT_POSTGRES_URL}): a throwaway
                        database is created there (the user needs CREATEDB) and dropped at the end
  --replicas <n>        1 (default) or 2: with 2, a second idgate on the same PostgreSQL (implies
                        --database postgres) and TokenReview + refresh rotation loaded on both
  --soak <s>            seconds of maximum-rate TokenReview for the memory check (default 60; 0: none)
  --soak-tokens <n>     distinct tokens the soak cycles through, as a cluster's reviews do (default
                        20000, minted before it; 0: the one warm token every time)
  --only <regex>        run only the scenarios whose id matches (ids: see the table)
  --max-tokens <n>      cap on tokens minted for each token pool (default 60000)
  --out <dir>           where latest.md and latest.json go (default bench/results)
  --node-flags=<s>      Node.js flags for the idgate server, space-separated (default: those of
                        deploy/Dockerfile and \`pnpm start\`, "${IDGATE_NODE_FLAGS.join(' ')}")
  --cpu-prof            write V8 CPU profiles of the idgate server to <out>/profiles and of the
                        bare route to <out>/profiles/bare
  --keep                keep the temporary directory (database, logs, token pools)
`;

/**
 * @param {string[]} argv
 * @param {NodeJS.ProcessEnv} env
 * @returns {{ help: true } | { help: false, error: string } | { help: false, error?: undefined, options: BenchOptions }}
 *
 * @typedef {{ duration: number, warmup: number, connections: number, threads: number,
 *   alg: 'RS256' | 'ES256' | 'EdDSA', database: 'sqlite' | 'postgres', postgresUrl?: string,
 *   replicas: number, soak: number, soakTokens: number, only?: RegExp, maxTokens: number, out: string,
 *   nodeFlags?: string[], cpuProf: boolean, keep: boolean }} BenchOptions
 */
export function parseFlags(argv, env, defaultOut = join(process.cwd(), 'results')) {
  // `pnpm bench -- --duration 3` reaches the script through turbo and `pnpm run`, which hand on
  // the separator too: a leading `--` is not an argument.
  const args = argv[0] === '--' ? argv.slice(1) : argv;
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        duration: { type: 'string', default: '5' },
        warmup: { type: 'string', default: '1' },
        connections: { type: 'string', default: '64' },
        threads: { type: 'string', default: '2' },
        alg: { type: 'string', default: 'RS256' },
        database: { type: 'string' },
        postgres: { type: 'string' },
        replicas: { type: 'string', default: '1' },
        soak: { type: 'string', default: '60' },
        'soak-tokens': { type: 'string', default: '20000' },
        only: { type: 'string' },
        'max-tokens': { type: 'string', default: '60000' },
        out: { type: 'string', default: defaultOut },
        'cpu-prof': { type: 'boolean', default: false },
        'node-flags': { type: 'string' },
        keep: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
      allowPositionals: false,
    }));
  } catch (error) {
    return { help: false, error: error instanceof Error ? error.message : String(error) };
  }
  if (values.help) return { help: true };
  /** @type {string | undefined} */
  let error;
  /** @param {string} name @param {string} raw @param {number} min @param {number} max */
  const number = (name, raw, min, max) => {
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max) {
      error ??= `--${name} ${raw}: must be a number from ${min} to ${max}`;
    }
    return value;
  };
  const alg = values.alg;
  if (!['RS256', 'ES256', 'EdDSA'].includes(alg)) error ??= `--alg ${alg}: must be RS256, ES256 or EdDSA`;
  if (values.database !== undefined && !['sqlite', 'postgres'].includes(values.database))
    error ??= `--database ${values.database}: must be sqlite or postgres`;
  const replicas = Math.round(number('replicas', values.replicas, 1, 2));
  const wantsPostgres = values.database === 'postgres' || values.postgres !== undefined || replicas > 1;
  if (values.database === 'sqlite' && wantsPostgres)
    error ??= '--database sqlite: --postgres and --replicas 2 need PostgreSQL';
  let only;
  try {
    only = values.only === undefined ? undefined : new RegExp(values.only);
  } catch {
    error ??= `--only ${values.only}: not a regular expression`;
  }
  /** @type {BenchOptions} */
  const options = {
    duration: number('duration', values.duration, 1, 600),
    warmup: number('warmup', values.warmup, 0, 60),
    connections: Math.round(number('connections', values.connections, 2, 1024)),
    threads: Math.round(number('threads', values.threads, 1, 64)),
    alg: /** @type {BenchOptions['alg']} */ (alg),
    database: wantsPostgres ? 'postgres' : 'sqlite',
    ...(wantsPostgres
      ? { postgresUrl: values.postgres ?? env.IDGATE_TEST_DATABASE_URL ?? DEFAULT_POSTGRES_URL }
      : {}),
    replicas,
    soak: number('soak', values.soak, 0, 3600),
    soakTokens: Math.round(number('soak-tokens', values['soak-tokens'], 0, 1_000_000)),
    ...(only === undefined ? {} : { only }),
    maxTokens: Math.round(number('max-tokens', values['max-tokens'], 100, 1_000_000)),
    out: values.out,
    ...(values['node-flags'] === undefined
      ? {}
      : { nodeFlags: values['node-flags'].split(/\s+/).filter(Boolean) }),
    cpuProf: values['cpu-prof'],
    keep: values.keep,
  };
  return error === undefined ? { help: false, options } : { help: false, error };
}
