// The targets from the issue, and the Markdown report.

/**
 * @typedef {{ id: string, system: string, label: string, rps: number, errors: number, rss?: number,
 *   cpu?: { client: number, serverMicrosPerRequest?: number },
 *   latency: { p50: number, p90: number, p99: number, max: number }, detail: Record<string, any> }} Measurement
 * @typedef {{ label: string, subject: string, reference: string, metric: 'rps' | 'p99',
 *   min?: number, max?: number }} Target
 * @typedef {{ label: string, subject: string, reference: string, value?: number, referenceValue?: number,
 *   ratio?: number, goal: string, met?: boolean, why?: string }} TargetResult
 */

/** @type {Target[]} Ratios are idgate / reference, from the same run. */
export const TARGETS = [
  {
    label: 'warm TokenReview ≥ 0.85× bare route',
    subject: 'idgate.tokenreview-warm',
    reference: 'bare.tokenreview',
    metric: 'rps',
    min: 0.85,
  },
  {
    label: 'warm TokenReview ≥ 4× oidc-provider introspection',
    subject: 'idgate.tokenreview-warm',
    reference: 'oidc-provider.introspection',
    metric: 'rps',
    min: 4,
  },
  {
    label: 'cold TokenReview ≥ 1.8× oidc-provider introspection',
    subject: 'idgate.tokenreview-cold',
    reference: 'oidc-provider.introspection',
    metric: 'rps',
    min: 1.8,
  },
  {
    label: 'bad-signature review ≥ 1× cold valid review',
    subject: 'idgate.tokenreview-bad-signature',
    reference: 'idgate.tokenreview-cold',
    metric: 'rps',
    min: 1,
  },
  {
    label: 'garbage review ≥ 1× cold valid review',
    subject: 'idgate.tokenreview-garbage',
    reference: 'idgate.tokenreview-cold',
    metric: 'rps',
    min: 1,
  },
  {
    label: 'expired review ≥ 1× cold valid review',
    subject: 'idgate.tokenreview-expired',
    reference: 'idgate.tokenreview-cold',
    metric: 'rps',
    min: 1,
  },
  {
    label: 'discovery ≥ 0.9× bare route',
    subject: 'idgate.discovery',
    reference: 'bare.discovery',
    metric: 'rps',
    min: 0.9,
  },
  {
    label: 'client_credentials ≥ 2× oidc-provider',
    subject: 'idgate.client-credentials',
    reference: 'oidc-provider.client-credentials',
    metric: 'rps',
    min: 2,
  },
  {
    label: 'warm TokenReview p99 ≤ 1.5× bare route p99',
    subject: 'idgate.tokenreview-warm',
    reference: 'bare.tokenreview',
    metric: 'p99',
    max: 1.5,
  },
];

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
  'idgate.client-credentials': 'bare.tokenreview',
  'idgate.refresh-rotation': 'bare.tokenreview',
};
const OIDC_REFERENCE = {
  'idgate.tokenreview-warm': 'oidc-provider.introspection',
  'idgate.tokenreview-cold': 'oidc-provider.introspection',
  'idgate.introspection': 'oidc-provider.introspection',
  'idgate.discovery': 'oidc-provider.discovery',
  'idgate.client-credentials': 'oidc-provider.client-credentials',
};

export const RSS_LIMIT = 200 * 2 ** 20;

const metricOf = (/** @type {Measurement} */ m, /** @type {'rps' | 'p99'} */ metric) =>
  metric === 'rps' ? m.rps : m.latency.p99;

/**
 * @param {Target[]} targets @param {Measurement[]} measurements
 * @param {{ underLoad: number, lifetime: number }} rss
 * @returns {TargetResult[]}
 */
export function evaluateTargets(targets, measurements, rss) {
  const byId = new Map(measurements.map((m) => [m.id, m]));
  /** @type {TargetResult[]} */
  const results = targets.map((target) => {
    const subject = byId.get(target.subject);
    const reference = byId.get(target.reference);
    const goal = target.min === undefined ? `≤ ${target.max}×` : `≥ ${target.min}×`;
    const base = { label: target.label, subject: target.subject, reference: target.reference, goal };
    if (subject === undefined || reference === undefined) return { ...base, why: 'not run' };
    const value = metricOf(subject, target.metric);
    const referenceValue = metricOf(reference, target.metric);
    const ratio = referenceValue > 0 ? value / referenceValue : Number.NaN;
    let met =
      Number.isFinite(ratio) &&
      (target.min === undefined || ratio >= target.min) &&
      (target.max === undefined || ratio <= target.max);
    /** @type {string | undefined} */
    let why;
    if (subject.errors > 0 || reference.errors > 0) {
      met = false;
      why = 'errors';
    }
    return { ...base, value, referenceValue, ratio, met, ...(why === undefined ? {} : { why }) };
  });
  results.push({
    label: 'idgate RSS under sustained load < 200 MB',
    subject: 'idgate',
    reference: '',
    goal: '< 200 MB',
    ...(rss.underLoad > 0
      ? { value: rss.underLoad, met: rss.underLoad < RSS_LIMIT }
      : { why: 'not measured (no /proc)' }),
  });
  return results;
}

const mb = (/** @type {number | undefined} */ bytes) =>
  bytes === undefined || bytes === 0 ? '—' : `${(bytes / 2 ** 20).toFixed(0)}`;
const ratio = (/** @type {number | undefined} */ r) =>
  r === undefined || !Number.isFinite(r) ? '—' : `${r.toFixed(2)}×`;
const int = (/** @type {number} */ n) => Math.round(n).toLocaleString('en-US');

/**
 * @param {{ machine: Record<string, any>, settings: Record<string, any>, measurements: Measurement[],
 *   idgateRss: { underLoad: number, lifetime: number }, targets: TargetResult[], notes: string[] }} report
 */
export function renderMarkdown(report) {
  const { machine, settings, measurements, targets, notes } = report;
  const byId = new Map(measurements.map((m) => [m.id, m]));
  /** @param {Measurement} m @param {Record<string, string>} table */
  const against = (m, table) => {
    const reference = byId.get(table[m.id] ?? '');
    return reference === undefined ? undefined : m.rps / reference.rps;
  };
  const lines = [
    '# idgate benchmark',
    '',
    `${machine.date} · Node ${machine.node} · ${machine.platform} · ${machine.cpus} CPUs (${machine.cpuModel}) · ` +
      `${machine.memoryGb} GB · load average at start ${machine.loadavg.join(' ')}`,
    '',
    `${settings.connections} connections, pipelining ${settings.pipelining}, ${settings.warmup} s warm-up + ` +
      `${settings.duration} s per scenario · idgate signs with ${settings.alg} on ${settings.database} · ` +
      'servers and load generator share this machine',
    '',
    '| Scenario | Server | req/s | p50 ms | p99 ms | Errors | Peak RSS MB | CPU µs/req | Load gen CPU | × bare route | × oidc-provider |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const m of measurements) {
    const isIdgate = m.system === 'idgate';
    lines.push(
      `| ${m.id.slice(m.id.indexOf('.') + 1)} | ${m.system} | ${int(m.rps)} | ${m.latency.p50} | ${m.latency.p99} | ` +
        `${m.errors} | ${mb(m.rss)} | ${m.cpu?.serverMicrosPerRequest === undefined ? '—' : int(m.cpu.serverMicrosPerRequest)} | ` +
        `${m.cpu === undefined ? '—' : `${Math.round(m.cpu.client * 100)} %`} | ` +
        `${isIdgate ? ratio(against(m, BARE_REFERENCE)) : ''} | ` +
        `${isIdgate ? ratio(against(m, OIDC_REFERENCE)) : ''} |`,
    );
  }
  lines.push(
    '',
    `idgate peak RSS: ${mb(report.idgateRss.underLoad)} MB under load (sampled every 100 ms), ` +
      `${mb(report.idgateRss.lifetime)} MB over its whole life (VmHWM, includes setup).`,
    '',
    'CPU µs/req: the server process’s CPU time (all its threads, /proc) over the measured run, per ' +
      'response. Load gen CPU: the load generator’s share of one CPU; near 100 % it, not the server, ' +
      'sets the pace.',
    '',
    '| Target | idgate | Reference | Ratio | Goal | Met |',
    '| --- | ---: | ---: | ---: | ---: | :---: |',
  );
  for (const t of targets) {
    const isRss = t.reference === '';
    const isLatency = t.label.includes('p99');
    const show = (/** @type {number | undefined} */ v) =>
      v === undefined ? '—' : isRss ? `${mb(v)} MB` : isLatency ? `${v} ms` : `${int(v)}/s`;
    const met =
      t.met === undefined ? `— (${t.why})` : t.met ? '✓' : t.why === undefined ? '✗' : `✗ (${t.why})`;
    lines.push(
      `| ${t.label} | ${show(t.value)} | ${isRss ? '' : show(t.referenceValue)} | ${isRss ? '' : ratio(t.ratio)} | ${t.goal} | ${met} |`,
    );
  }
  if (notes.length > 0) {
    lines.push('', 'Notes:', '', ...notes.map((note) => `- ${note}`));
  }
  lines.push('');
  return `${lines.join('\n')}\n`;
}
