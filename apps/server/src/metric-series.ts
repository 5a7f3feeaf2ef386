import type { Counter, Histogram } from 'prom-client';

// prom-client's `inc` and `observe` (its `labels()` children too) rebuild the series key from the
// label set, check the labels and allocate on every call: about half a microsecond per request
// for the HTTP metrics. The handles below do that once per series, then update the series entry
// exactly as prom-client does (same key, same entry shape, same arithmetic), so the exposition is
// what prom-client's own calls would give. They rely on prom-client 15's internals, named here;
// test/http/metric-series.test.ts holds them to prom-client's own calls, so an upgrade that
// changes those internals fails there rather than in production.

type Labels = Record<string, string>;

interface CounterInternals {
  hashMap: Record<string, { value: number; labels: Labels }>;
  labelNames: readonly string[];
  sortedLabelNames: readonly string[];
}

interface HistogramEntry {
  labels: Labels;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
  bucketExemplars?: Record<string, unknown>;
}

interface HistogramInternals {
  hashMap: Record<string, HistogramEntry>;
  labelNames: readonly string[];
  sortedLabelNames: readonly string[];
  upperBounds: readonly number[];
  bucketValues: Readonly<Record<string, number>>;
  bucketExemplars?: Readonly<Record<string, unknown>>;
}

/** prom-client's series key (`hashObject` with the sorted label names). */
function seriesKey(sortedLabelNames: readonly string[], labels: Labels): string {
  let key = '';
  for (const name of sortedLabelNames) {
    const value = labels[name];
    if (value !== undefined) key += `${name}:${value},`;
  }
  return key;
}

/** prom-client's `validateLabel`, once per handle instead of once per call. */
function checkLabels(labelNames: readonly string[], labels: Labels): void {
  for (const name of Object.keys(labels)) {
    if (!labelNames.includes(name)) {
      throw new Error(`Added label "${name}" is not included in initial labelset: ${labelNames.join(', ')}`);
    }
  }
}

/**
 * Adds one to the series of `counter` with `labels`: what `counter.inc(labels)` does, without its
 * per-call work. A registry reset is honoured (the series starts again from its next increment).
 * @example const count = counterSeries(metrics.httpRequests, { method: 'GET', route: '/x', status: '200' }); count();
 */
export function counterSeries<T extends string>(counter: Counter<T>, labels: Record<T, string>): () => void {
  const internals = counter as unknown as CounterInternals;
  checkLabels(internals.labelNames, labels);
  const key = seriesKey(internals.sortedLabelNames, labels);
  return () => {
    const entry = internals.hashMap[key];
    if (entry === undefined) internals.hashMap[key] = { value: 1, labels };
    else entry.value += 1;
  };
}

/**
 * Observes a value in the series of `histogram` with `labels`: what `histogram.observe(labels,
 * value)` does (a non-finite value throws the same TypeError), without its per-call work.
 * @example const duration = histogramSeries(metrics.httpRequestDuration, { method: 'GET', route: '/x' }); duration(0.002);
 */
export function histogramSeries<T extends string>(
  histogram: Histogram<T>,
  labels: Record<T, string>,
): (value: number) => void {
  const internals = histogram as unknown as HistogramInternals;
  checkLabels(internals.labelNames, labels);
  const key = seriesKey(internals.sortedLabelNames, labels);
  const bounds = internals.upperBounds;
  return (value) => {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    let entry = internals.hashMap[key];
    if (entry === undefined) {
      entry = { labels, bucketValues: { ...internals.bucketValues }, sum: 0, count: 0 };
      if (internals.bucketExemplars !== undefined) entry.bucketExemplars = { ...internals.bucketExemplars };
      internals.hashMap[key] = entry;
    }
    entry.sum += value;
    entry.count += 1;
    // The first bucket whose upper bound holds the value; above them all, only the count (+Inf).
    for (const bound of bounds) {
      if (value <= bound) {
        entry.bucketValues[bound] = (entry.bucketValues[bound] ?? 0) + 1;
        break;
      }
    }
  };
}
