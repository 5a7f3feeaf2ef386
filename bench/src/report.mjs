// The goals of the issue, their evaluation, and the Markdown report (paste-ready).
import { int, mark, mb, ratio } from './format.mjs';
import { renderDetails } from './report-tables.mjs';

/**
 * @typedef {import('./scenario.mjs').Measurement} Measurement
 * @typedef {{ subject: string, reference: string, referenceLabel: string, min: number }} Comparison
 * @typedef {{ path: string, comparisons: Comparison[] }} HeadlineRow
 * @typedef {{ subject: string, reference: string, referenceLabel: string, goal: string,
 *   ratio?: number, met?: boolean, why?: string }} ComparisonResult
 * @typedef {{ path: string, results: ComparisonResult[] }} HeadlineResult
 * @typedef {{ idle: number, soakSeconds: number, soakTokens?: number, soakPeak?: number, soakHwm?: number,
 *   soakRps?: number, soakErrors?: number }} MemoryResult
 */

/** @type {HeadlineRow[]} The issue's table: requests/s of idgate ÷ the reference's, same run. */
export const HEADLINE = [
  {
    path: 'introspection (resource servers call it per request)',
    comparisons: [
      {
        subject: 'idgate.introspection',
        reference: 'oidc-provider.introspection',
        referenceLabel: 'oidc-provider introspection',
        min: 1.5,
      },
    ],
  },
  {
    path: 'cold TokenReview (a token never seen, full RS256 check)',
    comparisons: [
      {
        subject: 'idgate.tokenreview-cold',
        reference: 'oidc-provider.introspection',
        referenceLabel: 'oidc-provider introspection',
        min: 1.8,
      },
    ],
  },
  {
    path: 'warm TokenReview',
    comparisons: [
      {
        subject: 'idgate.tokenreview-warm',
        reference: 'oidc-provider.introspection',
        referenceLabel: 'oidc-provider introspection',
        min: 3,
      },
      {
        subject: 'idgate.tokenreview-warm',
        reference: 'bare.tokenreview',
        referenceLabel: 'a bare fastify route',
        min: 0.7,
      },
    ],
  },
  {
    path: 'client_credentials, both issuing RS256 JWT access tokens',
    comparisons: [
      {
        subject: 'idgate.client-credentials',
        reference: 'oidc-provider-jwt.client-credentials',
        referenceLabel: 'oidc-provider',
        min: 2,
      },
    ],
  },
  {
    path: 'discovery',
    comparisons: [
      {
        subject: 'idgate.discovery',
        reference: 'bare.discovery',
        referenceLabel: 'a bare fastify route',
        min: 0.9,
      },
    ],
  },
];

/** Further checks, beyond the issue's table. */
export const CHECKS = [
  ...['bad-signature', 'garbage', 'expired'].map((kind) => ({
    path: `${kind} TokenReview at least as fast as a cold valid one`,
    comparisons: [
      {
        subject: `idgate.tokenreview-${kind}`,
        reference: 'idgate.tokenreview-cold',
        referenceLabel: 'cold TokenReview',
        min: 1,
      },
    ],
  })),
  // Issue 26: a token exchange within 1.3× of idgate's own client_credentials (≥ 1/1.3 of its rate).
  ...[
    ['token exchange of a GitHub Actions job token (RS256)', 'idgate.token-exchange'],
    ['token exchange of an ES256 job token', 'idgate.token-exchange-es256'],
  ].map(([path, subject]) => ({
    path: `${path}, within 1.3× of client_credentials`,
    comparisons: [
      {
        subject: /** @type {string} */ (subject),
        reference: 'idgate.client-credentials',
        referenceLabel: 'client_credentials',
        min: 0.77,
      },
    ],
  })),
  {
    path: 'client_credentials against opaque tokens (no signing)',
    comparisons: [
      {
        subject: 'idgate.client-credentials',
        reference: 'oidc-provider.client-credentials',
        referenceLabel: 'oidc-provider (opaque)',
        min: 1,
      },
    ],
  },
];

export const MEMORY_GOALS = { idle: 100 * 2 ** 20, soak: 200 * 2 ** 20 };

/**
 * Ratios and goals: a comparison whose rows are missing is "not run"; one whose rows had errors is
 * never met.
 * @param {HeadlineRow[]} rows @param {Measurement[]} measurements
 * @returns {HeadlineResult[]}
 */
export function evaluateHeadline(rows, measurements) {
  const byId = new Map(measurements.map((m) => [m.id, m]));
  return rows.map((row) => ({
    path: row.path,
    results: row.comparisons.map((c) => {
      const base = {
        subject: c.subject,
        reference: c.reference,
        referenceLabel: c.referenceLabel,
        goal: `≥ ${c.min}×`,
      };
      const subject = byId.get(c.subject);
      const reference = byId.get(c.reference);
      if (subject === undefined || reference === undefined) return { ...base, why: 'not run' };
      const ratio = reference.rps > 0 ? subject.rps / reference.rps : Number.NaN;
      if (subject.errors > 0 || reference.errors > 0) return { ...base, ratio, met: false, why: 'errors' };
      return { ...base, ratio, met: Number.isFinite(ratio) && ratio >= c.min };
    }),
  }));
}

/**
 * @param {MemoryResult | undefined} memory
 * @returns {MemoryGoal[]}
 *
 * @typedef {{ label: string, value?: number, detail?: string, goal: string, met?: boolean, why?: string }} MemoryGoal
 */
export function evaluateMemory(memory) {
  if (memory === undefined)
    return [
      { label: 'idle RSS of `pnpm start`', goal: '< 100 MB', why: 'not run' },
      { label: 'peak RSS under maximum-rate TokenReview', goal: '< 200 MB', why: 'not run' },
    ];
  const idle = { label: 'idle RSS of `pnpm start`', value: memory.idle, goal: '< 100 MB' };
  /** @type {MemoryGoal[]} */
  const rows = [
    memory.idle > 0 ? { ...idle, met: memory.idle < MEMORY_GOALS.idle } : { ...idle, why: 'no /proc' },
  ];
  const label = `peak RSS under ${memory.soakSeconds} s of maximum-rate TokenReview`;
  if (memory.soakPeak === undefined) {
    rows.push({ label, goal: '< 200 MB', why: 'not run (--soak 0)' });
  } else {
    const peak = Math.max(memory.soakPeak, memory.soakHwm ?? 0);
    rows.push({
      label,
      value: peak,
      detail: `sampled ${mb(memory.soakPeak)} MB, VmHWM ${mb(memory.soakHwm)} MB, ${int(memory.soakRps ?? 0)} req/s over ${int(memory.soakTokens ?? 1)} distinct token(s)`,
      goal: '< 200 MB',
      ...((memory.soakErrors ?? 0) > 0 ? { met: false, why: 'errors' } : { met: peak < MEMORY_GOALS.soak }),
    });
  }
  return rows;
}

/**
 * The headline table, exactly the issue's rows: "idgate : reference" is the measured ratio.
 * @param {HeadlineResult[]} results
 */
export function renderHeadline(results) {
  const lines = ['| Path | idgate : reference | Goal | Met |', '| --- | ---: | ---: | :---: |'];
  for (const row of results) {
    const cell = (/** @type {(r: ComparisonResult) => string} */ f) => row.results.map(f).join('; ');
    lines.push(
      `| ${row.path} | ${cell((r) => `${ratio(r.ratio)} ${r.referenceLabel}`)} | ${cell((r) => r.goal)} | ${cell(mark)} |`,
    );
  }
  return lines;
}

/**
 * @param {{ machine: Record<string, any>, settings: Record<string, any>, tokens: Record<string, number>,
 *   measurements: Measurement[], idgateRss: { underLoad: number, lifetime: number },
 *   memory?: MemoryResult | undefined, notes: string[] }} input
 */
export function buildReport(input) {
  return {
    ...input,
    // The issue's rows name RS256, the default; a run with --alg ES256 or EdDSA says what it signed with.
    headline: evaluateHeadline(HEADLINE, input.measurements).map((row) => ({
      ...row,
      path: row.path.replace('RS256', input.settings.alg ?? 'RS256'),
    })),
    checks: evaluateHeadline(CHECKS, input.measurements),
    memoryGoals: evaluateMemory(input.memory),
  };
}

/** @param {ReturnType<typeof buildReport>} report */
export function renderMarkdown(report) {
  const { machine, settings } = report;
  const lines = [
    '# idgate benchmark',
    '',
    `${machine.date} · Node ${machine.node} · ${machine.platform} · ${machine.cpus} CPUs (${machine.cpuModel}) · ` +
      `${machine.memoryGb} GB · load average at start ${machine.loadavg.join(' ')}`,
    '',
    `wrk, ${settings.connections} connections (${settings.threads} threads), ${settings.warmup} s warm-up + ` +
      `${settings.duration} s per scenario · idgate signs with ${settings.alg} on ${settings.database}` +
      `${settings.replicas > 1 ? `, ${settings.replicas} replicas` : ''} · servers and load generator share this machine`,
    '',
    '## Goals',
    '',
    ...renderHeadline(report.headline),
    '',
    '| Memory | idgate | Goal | Met |',
    '| --- | ---: | ---: | :---: |',
    ...report.memoryGoals.map(
      (m) =>
        `| ${m.label} | ${m.value === undefined ? '—' : `${mb(m.value)} MB`}${m.detail === undefined ? '' : ` (${m.detail})`} | ${m.goal} | ${mark(m)} |`,
    ),
    '',
    'Ratios are requests/s of idgate ÷ the reference’s, measured in the same run. oidc-provider is ' +
      'node-oidc-provider 9: introspection and discovery against its opaque-token configuration, ' +
      'client_credentials against its JWT access-token configuration (resource indicators, ' +
      `\`accessTokenFormat: 'jwt'\`, ${settings.alg}).`,
    '',
    ...renderDetails(report),
  ];
  return `${lines.join('\n')}\n`;
}
