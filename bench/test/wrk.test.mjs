import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCpuTicks } from '../src/processes.mjs';
import { mergeResults, parseWrkOutput, specText } from '../src/wrk.mjs';

const line = (/** @type {Record<string, unknown>} */ overrides) =>
  `BENCH-RESULT ${JSON.stringify({
    requests: 1000,
    duration_us: 2_000_000,
    span_us: 1_990_000,
    errors: { connect: 0, read: 0, write: 0, timeout: 0 },
    latency_us: { p50: 1234, p90: 2000, p99: 5678, max: 9000 },
    statuses: { 200: 1000 },
    cpu_ticks: 50,
    ok: 1000,
    bad_status: 0,
    bad_body: 0,
    sent: 1064,
    pool_empty: 0,
    collected: 0,
    threads_ran_out: 0,
    ...overrides,
  })}`;

const WRK_SUMMARY = `Running 2s test @ http://127.0.0.1:1234
  2 threads and 64 connections
  Latency Distribution
     50%    1.23ms
  1000 requests in 2.00s, 1.00MB read
Requests/sec:    500.00
`;

describe('parseWrkOutput', () => {
  it('reads the result line after wrk’s own summary: rate, latency in ms, wrk’s CPU share', () => {
    const result = parseWrkOutput(`${WRK_SUMMARY}${line({})}\n`);
    assert.equal(result.requests, 1000);
    assert.equal(result.duration, 2);
    assert.equal(result.rps, 500);
    assert.deepEqual(result.latency, { p50: 1.23, p90: 2, p99: 5.68, max: 9 });
    assert.equal(result.errors, 0);
    assert.equal(result.cpu.client, 0.25);
    assert.equal(result.detail.ranOut, false);
  });

  it('counts socket errors, timeouts, wrong statuses, wrong bodies and an empty refresh pool as errors', () => {
    const result = parseWrkOutput(
      line({
        errors: { connect: 1, read: 2, write: 3, timeout: 4 },
        bad_status: 5,
        bad_body: 6,
        pool_empty: 7,
        statuses: { 200: 980, 400: 5 },
      }),
    );
    assert.equal(result.errors, 1 + 2 + 3 + 4 + 5 + 6 + 7);
    assert.equal(result.detail.socketErrors, 6);
    assert.equal(result.detail.unexpectedStatus, 5);
    assert.equal(result.detail.bodyMismatches, 6);
    assert.equal(result.detail.refreshPoolEmpty, 7);
    assert.deepEqual(result.detail.statusCodes, { 200: 980, 400: 5 });
  });

  it('does not count wrk’s non-2xx responses: an expected 400 (a pending device poll) is a success', () => {
    const result = parseWrkOutput(
      `${WRK_SUMMARY}  Non-2xx or 3xx responses: 1000\n${line({ statuses: { 400: 1000 } })}`,
    );
    assert.equal(result.errors, 0);
  });

  it('rates a run whose pool ran out over the span in which requests were sent', () => {
    const result = parseWrkOutput(line({ threads_ran_out: 2, span_us: 500_000 }));
    assert.equal(result.detail.ranOut, true);
    assert.equal(result.duration, 0.5);
    assert.equal(result.rps, 2000);
  });

  it('fails clearly when wrk printed no result line (the script failed)', () => {
    assert.throws(() => parseWrkOutput('PANIC: unprotected error in call to Lua API'), /no result line/);
  });
});

describe('specText', () => {
  it('writes one key=value a line, headers repeated, the collect and forged settings', () => {
    const text = specText(
      {
        method: 'POST',
        path: '/oauth/token',
        headers: { authorization: 'Basic abc', 'content-type': 'application/x-www-form-urlencoded' },
        body: 'code={1}&code_verifier={2}',
        source: 'pool',
        file: '/tmp/codes.txt',
        start: 10,
        expect: { status: 200, bodyIncludes: '"access_token"' },
        collect: { file: '/tmp/out', location: 'code', tag: 'state', amount: 100 },
      },
      2,
    );
    assert.deepEqual(text.trim().split('\n'), [
      'method=POST',
      'path=/oauth/token',
      'threads=2',
      'header=authorization: Basic abc',
      'header=content-type: application/x-www-form-urlencoded',
      'body=code={1}&code_verifier={2}',
      'source=pool',
      'file=/tmp/codes.txt',
      'start=10',
      'expect_status=200',
      'expect_body="access_token"',
      'collect_file=/tmp/out',
      'collect_location=code',
      'collect_tag=state',
      'collect_amount=100',
    ]);
  });

  it('refuses a value with a newline (it would end the line)', () => {
    assert.throws(
      () => specText({ method: 'POST', path: '/', body: 'a\nb', expect: { status: 200 } }, 1),
      /newline/,
    );
  });
});

describe('mergeResults', () => {
  it('adds requests and rates, keeps the worst latency, weighs CPU per request by requests', () => {
    const a = parseWrkOutput(line({}));
    a.cpu.serverMicrosPerRequest = 100;
    const b = parseWrkOutput(
      line({ requests: 3000, latency_us: { p50: 1000, p90: 3000, p99: 4000, max: 20000 } }),
    );
    b.cpu.serverMicrosPerRequest = 200;
    const merged = mergeResults([a, b]);
    assert.equal(merged.requests, 4000);
    assert.equal(merged.rps, 500 + 1500);
    assert.deepEqual(merged.latency, { p50: 1.23, p90: 3, p99: 5.68, max: 20 });
    assert.equal(merged.cpu.serverMicrosPerRequest, (100 * 1000 + 200 * 3000) / 4000);
  });
});

describe('parseCpuTicks', () => {
  it('adds utime and stime, counting fields after the command name, which may hold spaces', () => {
    const stat = '4242 (node (bench) x) S 1 4242 4242 0 -1 4194304 100 0 0 0 1500 250 0 0 20 0 11 0';
    assert.equal(parseCpuTicks(stat), 1750);
  });
});
