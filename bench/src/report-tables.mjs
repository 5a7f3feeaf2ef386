// The report's detail tables: every scenario, the PostgreSQL write paths, the replicas.
import { int, mark, mb, ratio } from './format.mjs';

/** @typedef {import('./scenario.mjs').Measurement} Measurement */

/** The reference each idgate row is shown against, per column. */
const BARE_REFERENCE = {
  'idgate.tokenreview-warm': 'bare.tokenreview',
  'idgate.tokenreview-cold': 'bare.tokenreview',
  'idgate.tokenreview-bad-signature': 'bare.tokenreview',
  'idgate.tokenreview-garbage': 'bare.tokenreview',
  'idgate.tokenreview-expired': 'bare.tokenreview',
  'idgate.introspection': 'bare.tokenreview',
  'idgate.discovery': 'bare.discovery',
  'idgate.jwks': 'bare.jwks',
};
const OIDC_REFERENCE = {
  'idgate.tokenreview-warm': 'oidc-provider.introspection',
  'idgate.tokenreview-cold': 'oidc-provider.introspection',
  'idgate.introspection': 'oidc-provider.introspection',
  'idgate.discovery': 'oidc-provider.discovery',
  'idgate.client-credentials': 'oidc-provider-jwt.client-credentials',
};
export const WRITE_PATHS = [
  'idgate.refresh-rotation',
  'idgate.authorization-code',
  'idgate.device-poll-pending',
  'idgate.device-redeem',
];
/** Whole sign-ins driven from Node (not wrk): shown in a table of their own. */
export const SIGN_INS = ['idgate.sign-in-totp', 'idgate.sign-in-passkey'];
const REPLICATED = {
  'replicas.tokenreview-warm': 'idgate.tokenreview-warm',
  'replicas.refresh-rotation': 'idgate.refresh-rotation',
};

const micros = (/** @type {number | undefined} */ n) => (n === undefined ? '—' : int(n));
const fixed = (/** @type {number | undefined} */ n) => (n === undefined ? '—' : n.toFixed(2));

/**
 * @param {{ measurements: Measurement[], settings: Record<string, any>, machine: Record<string, any>,
 *   idgateRss: { underLoad: number, lifetime: number }, notes: string[],
 *   checks: import('./report.mjs').HeadlineResult[] }} report
 */
export function renderDetails(report) {
  const { measurements } = report;
  const byId = new Map(measurements.map((m) => [m.id, m]));
  /** @param {Measurement} m @param {Record<string, string>} table */
  const against = (m, table) => {
    const reference = byId.get(table[m.id] ?? '');
    return reference === undefined ? undefined : m.rps / reference.rps;
  };
  const lines = [
    '## Every scenario',
    '',
    '| Scenario | Server | req/s | p50 ms | p99 ms | Errors | Peak RSS MB | CPU µs/req | Load gen CPU | × bare route | × oidc-provider |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const m of measurements.filter((x) => !SIGN_INS.includes(x.id))) {
    const isIdgate = m.system === 'idgate';
    lines.push(
      `| ${m.id.slice(m.id.indexOf('.') + 1)} | ${m.system} | ${int(m.rps)} | ${m.latency.p50} | ${m.latency.p99} | ` +
        `${m.errors} | ${mb(m.rss)} | ${micros(m.cpu.serverMicrosPerRequest)} | ` +
        `${m.cpu.client === undefined ? '—' : `${Math.round(m.cpu.client * 100)} %`} | ` +
        `${isIdgate ? ratio(against(m, BARE_REFERENCE)) : ''} | ${isIdgate ? ratio(against(m, OIDC_REFERENCE)) : ''} |`,
    );
  }
  lines.push(
    '',
    `idgate peak RSS: ${mb(report.idgateRss.underLoad)} MB under these loads (sampled every 100 ms), ` +
      `${mb(report.idgateRss.lifetime)} MB over its whole life (VmHWM, includes setup and password sign-ins).`,
    '',
    'Every load is wrk (64 connections unless set otherwise, Lua request sources, every response ' +
      'checked: another status, a wrong body, a socket error or a timeout is an error). CPU µs/req: the ' +
      'server process’s CPU time (all its threads, /proc) over the measured run, per response. Load gen ' +
      'CPU: wrk’s own CPU as a share of one CPU. Latency: wrk’s histogram, not corrected for coordinated omission.',
  );

  const writes = WRITE_PATHS.map((id) => byId.get(id)).filter((m) => m !== undefined);
  if (writes.length > 0 && report.settings.database === 'postgres') {
    lines.push(
      '',
      '## Write paths on PostgreSQL',
      '',
      '| Grant step | req/s | p99 ms | Errors | idgate CPU µs/req | PostgreSQL CPU µs/req | Statements/req | Transactions/req |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    );
    for (const m of writes) {
      const db = m.detail.database ?? {};
      lines.push(
        `| ${m.label} | ${int(m.rps)} | ${m.latency.p99} | ${m.errors} | ${micros(m.cpu.serverMicrosPerRequest)} | ` +
          `${micros(db.postgresCpuMicros)} | ${fixed(db.statements)} | ${fixed(db.transactions)} |`,
      );
    }
    lines.push(
      '',
      'PostgreSQL CPU: the summed CPU time (/proc) of the backend processes connected to the run’s ' +
        'database, per response. Statements: every query idgate’s driver sent (one round trip each, ' +
        'BEGIN and COMMIT included), counted in the idgate process by a preloaded wrapper of ' +
        '`pg.Client#query`; transactions: the BEGINs among them (pg_stat_statements is not loaded on ' +
        'the shared server, and pg_stat_database shows idle backends’ counters only 10 s late).',
    );
  }

  const signIns = SIGN_INS.map((id) => byId.get(id)).filter((m) => m !== undefined);
  if (signIns.length > 0) {
    lines.push(
      '',
      '## Second-factor sign-ins',
      '',
      '| Sign-in | Sign-ins/s | p50 ms | p99 ms | Sign-ins | Errors | idgate CPU ms/sign-in | Peak RSS MB |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    );
    for (const m of signIns) {
      const cpu = m.cpu.serverMicrosPerRequest;
      lines.push(
        `| ${m.label} | ${m.rps.toFixed(1)} | ${m.latency.p50} | ${m.latency.p99} | ${int(m.requests)} | ${m.errors} | ` +
          `${cpu === undefined ? '—' : (cpu / 1000).toFixed(1)} | ${mb(m.rss)} |`,
      );
    }
    lines.push(
      '',
      `Each sign-in is a browser's whole flow without a session, driven from Node (fetch, ${signIns[0]?.detail.concurrency ?? 8} ` +
        'at a time, not wrk), timed from its first request to the 303 that sends it to the redirect URI ' +
        'with a code. Password + TOTP: GET /authorize, the login page, POST the password, the ' +
        'second-factor page, POST the code (a different person each time within a 30-s step: a code ' +
        'is accepted once); the password check (argon2id) is most of its cost. Passkey: GET /authorize, ' +
        'the login page (its single-use challenge), POST the assertion of a software ES256 passkey, on ' +
        'an idgate of its own whose issuer is http://localhost:<port> (WebAuthn refuses IP-literal ' +
        'hosts), on SQLite.',
    );
  }

  const replicated = Object.keys(REPLICATED)
    .map((id) => byId.get(id))
    .filter((m) => m !== undefined);
  if (replicated.length > 0) {
    lines.push(
      '',
      '## Two replicas on one PostgreSQL',
      '',
      '| Scenario | 1 replica req/s | 2 replicas req/s (total) | Scaling | Per replica req/s | Per replica CPU µs/req | 1 replica CPU µs/req | PostgreSQL CPU µs/req | Errors |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    );
    for (const m of replicated) {
      const single = byId.get(REPLICATED[/** @type {keyof typeof REPLICATED} */ (m.id)]);
      const parts = m.perTarget ?? [];
      lines.push(
        `| ${m.id.slice(m.id.indexOf('.') + 1)} | ${single === undefined ? '—' : int(single.rps)} | ${int(m.rps)} | ` +
          `${single === undefined ? '—' : ratio(m.rps / single.rps)} | ${parts.map((p) => int(p.rps)).join(' + ')} | ` +
          `${parts.map((p) => micros(p.cpu.serverMicrosPerRequest)).join(' / ')} | ${micros(single?.cpu.serverMicrosPerRequest)} | ` +
          `${micros(m.detail.database?.postgresCpuMicros)} | ${m.errors} |`,
      );
    }
    lines.push(
      '',
      `This machine has ${report.machine.cpus} CPUs, shared by both replicas, PostgreSQL and wrk: a second ` +
        'replica cannot add CPU here, so the total shows the overhead of running two (two event loops, ' +
        'two connection pools, the change feed between them), not a speed-up. For a capacity plan use ' +
        'the per-replica CPU µs/req: a replica with one CPU of its own serves about 1,000,000 ÷ that ' +
        'figure requests/s on that path, and PostgreSQL needs its CPU µs/req for each of them.',
    );
  }

  const checks = ['| Check | idgate : reference | Goal | Met |', '| --- | ---: | ---: | :---: |'];
  for (const row of report.checks) {
    for (const r of row.results)
      checks.push(`| ${row.path} | ${ratio(r.ratio)} ${r.referenceLabel} | ${r.goal} | ${mark(r)} |`);
  }
  lines.push('', '## Further checks', '', ...checks);
  if (report.notes.length > 0) lines.push('', '## Notes', '', ...report.notes.map((note) => `- ${note}`));
  lines.push('');
  return lines;
}
