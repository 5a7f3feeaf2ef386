import { describe, expect, it } from 'vitest';
import { counterSeries, histogramSeries } from '../../src/metric-series.js';
import { createMetrics, type Metrics } from '../../src/metrics.js';
import { seededRandom } from '../helpers/random.js';

// Deterministic, so a failure reproduces.
const random = seededRandom;

const NAMES = [
  'idgate_http_requests_total',
  'idgate_http_request_duration_seconds',
  'idgate_token_reviews_total',
] as const;

/** What a scrape shows of the metrics the handles feed, as text and as JSON. */
async function exposition(metrics: Metrics): Promise<{ text: string[]; json: unknown[] }> {
  const text: string[] = [];
  const json: unknown[] = [];
  for (const name of NAMES) {
    text.push(await metrics.registry.getSingleMetricAsString(name));
    json.push(await metrics.registry.getSingleMetric(name)?.get());
  }
  return { text, json };
}

const METHODS = ['GET', 'POST', 'other'];
const ROUTES = ['/oauth/authenticate', 'unmatched', '/a "quoted" \\ route\n'];
const STATUSES = ['200', '401', '404'];
// Bucket bounds exactly, between them, below and above them all, and fractions that add up inexactly.
const VALUES = [0, -1, 0.0005, 0.00051, 0.001, 0.1 + 0.2, 1, 2.5, 2.5000001, 1e9, 1e-12, 0.3];

describe('series handles', () => {
  it('expose exactly what prom-client’s own inc and observe give, resets included', async () => {
    const next = random(0x5e71e5);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
    const direct = createMetrics();
    const handled = createMetrics();
    const counters = new Map<string, () => void>();
    const histograms = new Map<string, (value: number) => void>();
    const reviews = new Map<string, () => void>();
    for (let step = 0; step < 3_000; step++) {
      const method = pick(METHODS);
      const route = pick(ROUTES);
      const status = pick(STATUSES);
      const value = pick(VALUES);
      const outcome = pick(['authenticated', 'denied']);
      const roll = next();
      if (roll < 0.005) {
        direct.registry.resetMetrics();
        handled.registry.resetMetrics();
      } else if (roll < 0.1) {
        // prom-client's own calls on the handled side too: both must land in one series.
        for (const metrics of [direct, handled]) {
          metrics.httpRequests.inc({ method, route, status });
          metrics.httpRequestDuration.observe({ method, route }, value);
        }
      } else {
        direct.httpRequests.inc({ method, route, status });
        direct.httpRequestDuration.observe({ method, route }, value);
        direct.tokenReviews.inc({ outcome });
        const countKey = `${method} ${route} ${status}`;
        let count = counters.get(countKey);
        if (count === undefined) {
          count = counterSeries(handled.httpRequests, { method, route, status });
          counters.set(countKey, count);
        }
        count();
        let duration = histograms.get(`${method} ${route}`);
        if (duration === undefined) {
          duration = histogramSeries(handled.httpRequestDuration, { method, route });
          histograms.set(`${method} ${route}`, duration);
        }
        duration(value);
        let review = reviews.get(outcome);
        if (review === undefined) {
          review = counterSeries(handled.tokenReviews, { outcome });
          reviews.set(outcome, review);
        }
        review();
      }
      if (step % 250 === 0 || step === 2_999) {
        expect(await exposition(handled)).toEqual(await exposition(direct));
      }
    }
    const { text } = await exposition(handled);
    expect(text.join('\n')).toContain('idgate_http_request_duration_seconds_bucket{le="+Inf"');
  });

  it('refuse what prom-client refuses: an unknown label, a value that is not a finite number', () => {
    const metrics = createMetrics();
    expect(() => counterSeries(metrics.httpRequests, { method: 'GET', nope: 'x' } as never)).toThrow(
      /not included in initial labelset/,
    );
    const duration = histogramSeries(metrics.httpRequestDuration, { method: 'GET', route: '/x' });
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => metrics.httpRequestDuration.observe({ method: 'GET', route: '/x' }, value)).toThrow(
        TypeError,
      );
      expect(() => duration(value)).toThrow(TypeError);
    }
  });
});
