// One load, in its own process so the generator never shares an event loop with the orchestrator
// or a server: reads a JSON spec on stdin, drives autocannon (as a library), prints one JSON result
// line on stdout. Warm-up, when asked for, is a separate autocannon run just before the measured
// one, with the same request source.
//
// Spec:
//   url, connections, duration (s), warmup (s, 0 for none), pipelining, timeout (s)
//   amount?            stop after this many responses instead of after `duration`
//   request: { method, path, headers, ... } and one body source:
//     body             a fixed body
//     tokens           { file, start?, template: [before, after] }: a token from `file` (one per
//                      line, from line `start`) that no earlier request sent, inside
//                      `before` + token + `after`; a run ends early rather than repeat one
//     forged           { token, template }: `token` with a fresh random `jti` in its payload and its
//                      original signature, so a well-formed token whose signature does not match
//     garbage          { template }: a fresh random JWT-shaped string every time
//     refresh          { file, template }: refresh-token rotation; each request sends a refresh
//                      token no request has sent yet, the new one from each 200 goes back to the
//                      pool (so the pool needs at least 2 × connections: warm-up and the measured
//                      run each strand the tokens of the requests in flight when they stop)
//   expect: { status, bodyIncludes? }: a response with another status or body counts as an error
//   collect?: { file, field }: writes `field` of every expected JSON response to `file`, one per line
//   serverPid?         the server's pid: its CPU time over the measured run is reported (Linux /proc)
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import autocannon from 'autocannon';

/** @param {NodeJS.ReadableStream} stream */
async function readAll(stream) {
  /** @type {Buffer[]} */
  const chunks = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** @param {string} file */
const readLines = (file) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '');

/** The token's payload with a fresh `jti`, under its own header and signature. */
function forger(/** @type {string} */ token) {
  const [header, payload, signature] = token.split('.');
  const claims = JSON.parse(Buffer.from(/** @type {string} */ (payload), 'base64url').toString('utf8'));
  return () => {
    claims.jti = randomBytes(16).toString('base64url');
    return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
  };
}

const b64 = (/** @type {number} */ bytes) => randomBytes(bytes).toString('base64url');

const spec = JSON.parse(await readAll(process.stdin));
const { request, expect } = spec;

/** Counters of the run in progress (reset after warm-up). */
const fresh = () => ({ bodyMismatches: 0, unexpectedStatus: 0, refreshPoolEmpty: 0 });
let stats = fresh();
/** @type {string[]} */
const collected = [];
/** Refresh tokens not sent yet; the one a response just issued goes to the back. @type {string[]} */
const refreshPool = request.refresh === undefined ? [] : readLines(request.refresh.file);
/** Tokens of a `tokens` source, and how many have been sent. */
const tokens =
  request.tokens === undefined ? [] : readLines(request.tokens.file).slice(request.tokens.start ?? 0);
let tokensSent = 0;

/** @type {Record<string, unknown>} */
const req = { method: request.method, path: request.path, headers: request.headers };
/** @typedef {Record<string, unknown>} Req */

if (request.body !== undefined) {
  req.body = request.body;
} else if (request.tokens !== undefined) {
  const [before, after] = request.tokens.template;
  if (tokens.length === 0) throw new Error(`no tokens in ${request.tokens.file}`);
  // `maxOverallRequests` stops the run before the pool is exhausted; the modulo is a backstop.
  req.setupRequest = (/** @type {Req} */ r) => ({
    ...r,
    body: before + tokens[tokensSent++ % tokens.length] + after,
  });
} else if (request.forged !== undefined) {
  const [before, after] = request.forged.template;
  const forge = forger(request.forged.token);
  req.setupRequest = (/** @type {Req} */ r) => ({ ...r, body: before + forge() + after });
} else if (request.garbage !== undefined) {
  const [before, after] = request.garbage.template;
  req.setupRequest = (/** @type {Req} */ r) => ({
    ...r,
    body: `${before}eyJ${b64(24)}.${b64(180)}.${b64(256)}${after}`,
  });
} else if (request.refresh !== undefined) {
  const [before, after] = request.refresh.template;
  req.setupRequest = (/** @type {Req} */ r) => {
    const token = refreshPool.shift();
    if (token === undefined) stats.refreshPoolEmpty += 1;
    return { ...r, body: before + encodeURIComponent(token ?? 'pool-empty') + after };
  };
}

req.onResponse = (/** @type {number} */ status, /** @type {string} */ body) => {
  if (status !== expect.status) {
    // autocannon counts non-2xx itself; a 2xx other than the expected one is counted here.
    if (status >= 200 && status < 300) stats.unexpectedStatus += 1;
    return;
  }
  if (expect.bodyIncludes !== undefined && !body.includes(expect.bodyIncludes)) {
    stats.bodyMismatches += 1;
    return;
  }
  if (request.refresh === undefined && spec.collect === undefined) return;
  let parsed;
  try {
    parsed = JSON.parse(body);
  } catch {
    stats.bodyMismatches += 1;
    return;
  }
  if (request.refresh !== undefined) {
    if (typeof parsed.refresh_token === 'string') refreshPool.push(parsed.refresh_token);
    else stats.bodyMismatches += 1;
  }
  if (spec.collect !== undefined && typeof parsed[spec.collect.field] === 'string') {
    collected.push(parsed[spec.collect.field]);
  }
};

const connections = spec.connections;
/**
 * One autocannon run of `duration` seconds (or `amount` responses); a `tokens` source also stops it
 * when every token has been sent once.
 * @param {{ duration?: number, amount?: number }} bound
 */
async function run(bound) {
  /** @type {Record<string, unknown>} */
  const limit = {};
  if (bound.amount !== undefined) limit.amount = bound.amount;
  else limit.duration = bound.duration;
  if (request.tokens !== undefined) {
    const left = tokens.length - tokensSent;
    // autocannon gives each connection an equal share; it needs at least one each.
    if (left < connections) return undefined;
    limit.maxOverallRequests = left;
  }
  return autocannon({
    url: spec.url,
    connections,
    pipelining: spec.pipelining ?? 1,
    timeout: spec.timeout ?? 10,
    requests: [req],
    ...limit,
  });
}

if (spec.warmup > 0) {
  await run({ duration: spec.warmup });
  stats = fresh();
}
/** CPU seconds (user + system) process `pid` has used, from /proc; undefined elsewhere. */
function cpuSeconds(/** @type {number | undefined} */ pid) {
  if (pid === undefined) return undefined;
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}
const sentBefore = tokensSent;
const serverCpuBefore = cpuSeconds(spec.serverPid);
const clientCpuBefore = process.cpuUsage();
const result = await run(spec.amount === undefined ? { duration: spec.duration } : { amount: spec.amount });
const clientCpu = process.cpuUsage(clientCpuBefore);
const serverCpuAfter = cpuSeconds(spec.serverPid);
if (result === undefined)
  throw new Error(`the token pool ran out (${tokens.length} tokens) before the measured run`);
if (spec.collect !== undefined) writeFileSync(spec.collect.file, `${collected.join('\n')}\n`);

const errors = result.errors + result.non2xx + stats.unexpectedStatus + stats.bodyMismatches;
process.stdout.write(
  `${JSON.stringify({
    requests: result.requests.total,
    duration: result.duration,
    rps: result.requests.total / result.duration,
    latency: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    errors,
    cpu: {
      // The load generator's share of one CPU, and the server's CPU time per response.
      client: (clientCpu.user + clientCpu.system) / 1e6 / result.duration,
      serverMicrosPerRequest:
        serverCpuBefore === undefined || serverCpuAfter === undefined || result.requests.total === 0
          ? undefined
          : ((serverCpuAfter - serverCpuBefore) * 1e6) / result.requests.total,
    },
    detail: {
      socketErrors: result.errors,
      timeouts: result.timeouts,
      non2xx: result.non2xx,
      unexpectedStatus: stats.unexpectedStatus,
      bodyMismatches: stats.bodyMismatches,
      statusCodes: result.statusCodeStats,
      ...(request.tokens === undefined
        ? {}
        : {
            pool: tokens.length,
            sent: tokensSent - sentBefore,
            repeated: Math.max(0, tokensSent - tokens.length),
            ranOut: tokensSent >= tokens.length,
          }),
      ...(request.refresh === undefined ? {} : { refreshPoolEmpty: stats.refreshPoolEmpty }),
      ...(spec.collect === undefined ? {} : { collected: collected.length }),
    },
  })}\n`,
);
