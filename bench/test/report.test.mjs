import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseFlags } from '../src/cli.mjs';
import { perRequest } from '../src/postgres.mjs';
import {
  buildReport,
  evaluateHeadline,
  evaluateMemory,
  HEADLINE,
  renderHeadline,
  renderMarkdown,
} from '../src/report.mjs';

/** @param {string} id @param {number} rps @param {number} [errors] */
const m = (id, rps, errors = 0) => ({
  id,
  system: id.split('.')[0] ?? '',
  label: id,
  rps,
  requests: rps * 5,
  duration: 5,
  errors,
  latency: { p50: 1, p90: 2, p99: 3, max: 4 },
  cpu: {},
  detail: {},
});

const ALL = [
  m('idgate.introspection', 3000),
  m('oidc-provider.introspection', 2000),
  m('idgate.tokenreview-cold', 3000),
  m('idgate.tokenreview-warm', 6000),
  m('bare.tokenreview', 10000),
  m('idgate.client-credentials', 2000),
  m('oidc-provider-jwt.client-credentials', 1000),
  m('idgate.discovery', 8000),
  m('bare.discovery', 10000),
];

describe('the issue’s table', () => {
  it('has exactly its rows, with its references and goals', () => {
    const lines = renderHeadline(evaluateHeadline(HEADLINE, ALL));
    assert.deepEqual(lines, [
      '| Path | idgate : reference | Goal | Met |',
      '| --- | ---: | ---: | :---: |',
      '| introspection (resource servers call it per request) | 1.50× oidc-provider introspection | ≥ 1.5× | ✓ |',
      '| cold TokenReview (a token never seen, full RS256 check) | 1.50× oidc-provider introspection | ≥ 1.8× | ✗ |',
      '| warm TokenReview | 3.00× oidc-provider introspection; 0.60× a bare fastify route | ≥ 3×; ≥ 0.7× | ✓; ✗ |',
      '| client_credentials, both issuing RS256 JWT access tokens | 2.00× oidc-provider | ≥ 2× | ✓ |',
      '| discovery | 0.80× a bare fastify route | ≥ 0.9× | ✗ |',
    ]);
  });

  it('compares client_credentials with the oidc-provider that signs JWTs, not the opaque one', () => {
    const [, , , cc] = evaluateHeadline(HEADLINE, [...ALL, m('oidc-provider.client-credentials', 4000)]);
    assert.equal(cc?.results[0]?.reference, 'oidc-provider-jwt.client-credentials');
    assert.equal(cc?.results[0]?.ratio, 2);
  });

  it('never marks a goal met when either side had errors, and says which were not run', () => {
    const results = evaluateHeadline(HEADLINE, [
      m('idgate.introspection', 9000, 3),
      m('oidc-provider.introspection', 1000),
    ]);
    assert.deepEqual(results[0]?.results[0], {
      subject: 'idgate.introspection',
      reference: 'oidc-provider.introspection',
      referenceLabel: 'oidc-provider introspection',
      goal: '≥ 1.5×',
      ratio: 9,
      met: false,
      why: 'errors',
    });
    assert.equal(results[1]?.results[0]?.why, 'not run');
    assert.equal(results[1]?.results[0]?.met, undefined);
  });
});

describe('memory goals', () => {
  const MB = 2 ** 20;
  it('idle < 100 MB; the soak’s peak is the larger of the sampled peak and VmHWM, < 200 MB', () => {
    const [idle, soak] = evaluateMemory({
      idle: 99 * MB,
      soakSeconds: 60,
      soakPeak: 150 * MB,
      soakHwm: 201 * MB,
    });
    assert.equal(idle?.met, true);
    assert.equal(soak?.met, false);
    assert.equal(soak?.value, 201 * MB);
    assert.equal(soak?.label, 'peak RSS under 60 s of maximum-rate TokenReview');
  });
  it('a soak with errors is not met; --soak 0 is not run', () => {
    assert.equal(
      evaluateMemory({ idle: 1, soakSeconds: 5, soakPeak: MB, soakHwm: MB, soakErrors: 2 })[1]?.met,
      false,
    );
    assert.match(evaluateMemory({ idle: 1, soakSeconds: 0 })[1]?.why ?? '', /not run/);
  });
});

describe('PostgreSQL per-request figures', () => {
  it('counts backends that appeared during the run whole and drops those that ended', () => {
    const before = { 'pid:1': 1.0, 'pid:2': 2.0, postgresCpu: 3, statements: 100, transactions: 10 };
    const after = { 'pid:1': 1.5, 'pid:3': 0.5, postgresCpu: 2, statements: 1100, transactions: 210 };
    assert.deepEqual(perRequest(before, after, 100), {
      postgresCpuMicros: 10_000,
      statements: 10,
      transactions: 2,
    });
  });
});

describe('flags', () => {
  const env = { IDGATE_TEST_DATABASE_URL: 'postgres://u@127.0.0.1:5432/t' };
  it('--database postgres uses IDGATE_TEST_DATABASE_URL; --postgres <url> implies it', () => {
    const a = parseFlags(['--database', 'postgres'], env);
    assert.equal(
      a.help === false && a.error === undefined && a.options.postgresUrl,
      env.IDGATE_TEST_DATABASE_URL,
    );
    const b = parseFlags(['--postgres', 'postgres://x@127.0.0.1/y'], {});
    assert.equal(b.help === false && b.error === undefined && b.options.database, 'postgres');
  });
  it('takes the flags after the `--` that `pnpm bench -- …` hands on through turbo and pnpm run', () => {
    const a = parseFlags(['--', '--duration', '3', '--replicas', '2'], env);
    assert.equal(a.help === false && a.error, undefined);
    assert.deepEqual(
      a.help === false && a.error === undefined && [a.options.duration, a.options.replicas],
      [3, 2],
    );
  });
  it('--replicas 2 implies PostgreSQL, and contradicts --database sqlite', () => {
    const a = parseFlags(['--replicas', '2'], {});
    assert.equal(a.help === false && a.error === undefined && a.options.database, 'postgres');
    const b = parseFlags(['--replicas', '2', '--database', 'sqlite'], {});
    assert.match((b.help === false && b.error) || '', /need PostgreSQL/);
  });
  it('defaults: 5 s, 1 s warm-up, 64 connections, a 60 s soak over 20,000 tokens, SQLite', () => {
    const a = parseFlags([], {});
    assert.ok(a.help === false && a.error === undefined);
    assert.deepEqual(
      [
        a.options.duration,
        a.options.warmup,
        a.options.connections,
        a.options.soak,
        a.options.soakTokens,
        a.options.database,
      ],
      [5, 1, 64, 60, 20_000, 'sqlite'],
    );
    const one = parseFlags(['--soak-tokens', '0'], {});
    assert.equal(one.help === false && one.error === undefined && one.options.soakTokens, 0);
  });
  it('rejects out-of-range numbers and unknown flags', () => {
    assert.match(/** @type {any} */ (parseFlags(['--duration', '0'], {})).error, /--duration 0/);
    assert.match(/** @type {any} */ (parseFlags(['--nope'], {})).error, /nope/);
  });
});

describe('the Markdown report', () => {
  const report = (/** @type {string} */ alg) =>
    buildReport({
      machine: {
        date: 'd',
        node: 'v20',
        platform: 'linux',
        cpus: 2,
        cpuModel: 'cpu',
        memoryGb: 8,
        loadavg: [1, 1, 1],
      },
      settings: { connections: 64, threads: 2, warmup: 1, duration: 5, alg, database: 'sqlite', replicas: 1 },
      tokens: {},
      measurements: ALL,
      idgateRss: { underLoad: 0, lifetime: 0 },
      memory: { idle: 90 * 2 ** 20, soakSeconds: 60, soakPeak: 120 * 2 ** 20, soakHwm: 130 * 2 ** 20 },
      notes: ['a note'],
    });
  it('starts with the goals, then memory, then every scenario, and ends with the notes', () => {
    const text = renderMarkdown(report('RS256'));
    const order = [
      '## Goals',
      '| introspection (resource',
      '| idle RSS',
      '## Every scenario',
      '## Notes',
      '- a note',
    ];
    const positions = order.map((part) => text.indexOf(part));
    assert.ok(
      positions.every((p) => p >= 0),
      JSON.stringify(positions),
    );
    assert.deepEqual(
      [...positions].sort((a, b) => a - b),
      positions,
    );
  });
  it('names the algorithm of the run in the issue’s rows', () => {
    const text = renderMarkdown(report('ES256'));
    assert.match(text, /both issuing ES256 JWT access tokens/);
    assert.match(text, /full ES256 check/);
  });
});
