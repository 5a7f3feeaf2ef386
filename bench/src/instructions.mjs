// Instructions per request of one idgate build, counted by valgrind's callgrind: what a request
// costs in user space, whatever the host's virtual CPUs do from one minute to the next (wrk's
// requests/s and /proc's CPU time move by a third between runs of one build on this machine).
//
//   node bench/src/instructions.mjs [--checkout DIR] [--warm N] [--measure N] [--keep DIR] SCENARIO
//
// SCENARIO: discovery | warm (TokenReview of one user token) | garbage (TokenReview of random
// JWT-shaped text) | expired (TokenReview of a different expired token each time) | cc (token
// endpoint, client_credentials) | exchange (token endpoint, RFC 8693 token exchange of a different
// GitHub-Actions-shaped RS256 job token each time, as `pnpm bench`'s idgate.token-exchange) |
// exchange-es256 (the same, signed ES256, as idgate.token-exchange-es256). DIR is a built checkout (`pnpm build`, or
// `node scripts/build-js.mjs --with-deps apps/server`), this one by default: point it at a clone of
// another commit to compare two builds. The server runs under callgrind with instrumentation off;
// N requests on 8 keep-alive connections warm it up (the JIT settles), the next ones are counted.
// `--keep DIR` copies the dumps there (`SCENARIO.callgrind.out.PID-THREAD`) for callgrind_annotate.
// Prints one JSON line: instructions per request, and the same without V8's major (mark-compact)
// collections, which land in a window or not by chance and swing a single run by ~10 %, and the main
// thread's alone (what the event loop spends; the JIT compiler's and GC's helper threads excluded).
// Runs of one build still differ by a few per cent: compare builds by several runs each.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { IDGATE_NODE_FLAGS } from './cli.mjs';
import { idgateEnvironment, seed, subjectTokens } from './idgate.mjs';
import { freePort } from './processes.mjs';
import { EXCHANGE_FORM, reviewBody } from './reads.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    checkout: { type: 'string', default: resolve(dirname(fileURLToPath(import.meta.url)), '../..') },
    warm: { type: 'string', default: '40000' },
    measure: { type: 'string', default: '16000' },
    keep: { type: 'string' },
  },
});
const scenario = positionals[0] ?? 'discovery';
const warm = Number(values.warm);
const measure = Number(values.measure);
const serverBin = join(values.checkout, 'apps/server/dist/bin.js');

// What V8 spends in its major collections (self cost of these functions).
const MAJOR_GC =
  /MarkCompact|ConcurrentMarking|MarkingVisitor|Sweeper|IncrementalMarking|MarkingWorklist|MemoryChunk|IteratePointers<v8::internal::(Concurrent|Main)Marking|RelocIterator/;

const tmp = mkdtempSync(join(tmpdir(), 'idgate-instructions-'));
const port = await freePort();
const env = idgateEnvironment({ port, databaseUrl: `sqlite:${join(tmp, 'bench.db')}`, alg: 'RS256' });
const seeded = await seed(serverBin, env);
const out = join(tmp, 'callgrind.out');
const server = spawn(
  'valgrind',
  [
    ...['--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', `--callgrind-out-file=${out}`],
    ...[process.execPath, ...IDGATE_NODE_FLAGS, serverBin, 'serve'],
  ],
  { env, stdio: ['ignore', 'ignore', 'ignore'] },
);
const callgrind = (/** @type {string[]} */ ...args) =>
  execFileSync('callgrind_control', [...args, String(server.pid)], { stdio: 'ignore' });

try {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  /** @returns {Promise<{ status: number, body: string }>} */
  const request = (/** @type {http.RequestOptions} */ options, /** @type {string} */ body = '') =>
    new Promise((done, fail) => {
      const req = http.request({ host: '127.0.0.1', port, agent, ...options }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => done({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', fail);
      req.end(body);
    });
  for (let tries = 0; ; tries++) {
    const ready = await request({ path: '/readyz' }).catch(() => undefined);
    if (ready?.status === 200) break;
    if (tries > 600) throw new Error('idgate did not become ready under valgrind');
    await new Promise((wait) => setTimeout(wait, 500));
  }

  const form = (/** @type {string} */ authorization, /** @type {string} */ body) =>
    request(
      {
        method: 'POST',
        path: '/oauth/token',
        headers: {
          ...(authorization === '' ? {} : { authorization }),
          'content-type': 'application/x-www-form-urlencoded',
        },
      },
      body,
    );
  const accessToken = async (/** @type {string} */ authorization, /** @type {string} */ body) =>
    JSON.parse((await form(authorization, body)).body).access_token;
  const review = (/** @type {string} */ token) =>
    request(
      {
        method: 'POST',
        path: '/oauth/authenticate',
        headers: { authorization: `Bearer ${seeded.apiKey}`, 'content-type': 'application/json' },
      },
      reviewBody(token),
    );
  const b64 = (/** @type {number} */ n) => randomBytes(n).toString('base64url').slice(0, n);

  /** @type {Record<string, () => Promise<{ ok: boolean, body: string }>>} */
  const scenarios = {
    discovery: async () => {
      const res = await request({ path: '/oauth/.well-known/openid-configuration' });
      return { ok: res.status === 200, body: res.body };
    },
    cc: async () => {
      const res = await form(seeded.auth.service, 'grant_type=client_credentials');
      return { ok: res.body.includes('"access_token"'), body: res.body };
    },
    garbage: async () => {
      const res = await review(`eyJ${b64(32)}.${b64(240)}.${b64(342)}`);
      return { ok: res.body.includes('"authenticated":false'), body: res.body };
    },
  };
  if (scenario === 'warm') {
    const { username, password } = seeded.user;
    const token = await accessToken(
      seeded.auth.app,
      `grant_type=password&username=${username}&password=${encodeURIComponent(password)}&scope=openid%20groups`,
    );
    scenarios.warm = async () => {
      const res = await review(token);
      return { ok: res.body.includes('"authenticated":true'), body: res.body };
    };
  }
  if (scenario === 'expired') {
    // Lifetime 1 s and `exp` in whole seconds: all are expired 2.5 s after the last is minted.
    const tokens = [];
    while (tokens.length < warm + measure)
      tokens.push(
        ...(await Promise.all(
          Array.from({ length: 8 }, () => accessToken(seeded.auth.expiring, 'grant_type=client_credentials')),
        )),
      );
    await new Promise((wait) => setTimeout(wait, 2500));
    let next = 0;
    scenarios.expired = async () => {
      const res = await review(tokens[next++]);
      return { ok: res.body.includes('"authenticated":false'), body: res.body };
    };
  }
  if (scenario === 'exchange' || scenario === 'exchange-es256') {
    // Each subject jti is accepted once: one signed job token per request.
    const file = join(tmp, 'subject-tokens.txt');
    subjectTokens(seeded.ciKeys, warm + measure, file, scenario === 'exchange' ? 'RS256' : 'ES256');
    const tokens = readFileSync(file, 'utf8').trimEnd().split('\n');
    let next = 0;
    scenarios[scenario] = async () => {
      const res = await form('', EXCHANGE_FORM.replace('{1}', tokens[next++] ?? ''));
      return { ok: res.body.includes('"access_token"'), body: res.body };
    };
  }
  const one = scenarios[scenario];
  if (one === undefined)
    throw new Error(`unknown scenario ${scenario}: ${Object.keys(scenarios).join(', ')}`);
  const run = async (/** @type {number} */ count) => {
    let left = count;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (left-- > 0) {
          const answer = await one();
          if (!answer.ok) throw new Error(`unexpected answer: ${answer.body.slice(0, 200)}`);
        }
      }),
    );
  };

  await run(warm);
  callgrind('-i', 'on');
  await run(measure);
  callgrind('-i', 'off');
  callgrind('-d');
  // One dump per thread (`-01` is the main thread: the event loop, where a request waits; the
  // others are V8's compiler and GC helpers and libuv's pool).
  const dumps = readdirSync(tmp).filter((name) => /^callgrind\.out\.\d+(-\d+)?$/.test(name));
  if (dumps.length === 0) throw new Error('callgrind wrote no dump');
  let total = 0;
  let main = 0;
  let major = 0;
  /** @type {Record<string, number>} */
  const threads = {};
  for (const dump of dumps.sort()) {
    const totals = [...readFileSync(join(tmp, dump), 'utf8').matchAll(/^totals: (\d+)/gm)].reduce(
      (sum, match) => sum + Number(match[1]),
      0,
    );
    total += totals;
    if (dump.endsWith('-01')) main = totals;
    threads[dump.replace(/^.*-/, '')] = Math.round(totals / measure);
    const annotated = execFileSync('callgrind_annotate', ['--threshold=100', join(tmp, dump)], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    });
    for (const line of annotated.split('\n')) {
      const match = line.match(/^\s*([\d,]+) \(.*?\)\s+(.*)$/);
      if (match?.[1] !== undefined && MAJOR_GC.test(match[2] ?? ''))
        major += Number(match[1].replaceAll(',', ''));
    }
  }
  console.log(
    JSON.stringify({
      checkout: values.checkout,
      scenario,
      requests: measure,
      instructionsPerRequest: Math.round(total / measure),
      withoutMajorGc: Math.round((total - major) / measure),
      mainThread: Math.round(main / measure),
      threads,
    }),
  );
  // The dumps, for callgrind_annotate (which functions of which thread), when asked to keep them.
  if (values.keep !== undefined)
    for (const dump of dumps) copyFileSync(join(tmp, dump), join(values.keep, `${scenario}.${dump}`));
} finally {
  server.kill('SIGTERM');
  await new Promise((done) => server.once('exit', done));
  rmSync(tmp, { recursive: true, force: true });
}
