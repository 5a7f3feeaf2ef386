import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SeriesCounter, SeriesHistogram } from '../../src/telemetry/metric-series.js';
import { seededRandom } from '../helpers/random.js';

// Deterministic, so a failure reproduces.
const random = seededRandom;

const REQUESTS = {
  name: 'idgate_http_requests_total',
  help: 'HTTP requests answered, by method, route pattern and status code.',
  labelNames: ['method', 'route', 'status'] as const,
};
const REVIEWS = {
  name: 'idgate_token_reviews_total',
  help: 'Kubernetes TokenReviews decided, by outcome (authenticated or denied).',
  labelNames: ['outcome'] as const,
};

type RequestLabels = { method: string; route: string; status: string };

/** The same two counters, as plain prom-client counters or as series counters, in a registry of their own. */
function counters<C extends typeof Counter | typeof SeriesCounter>(Kind: C) {
  const registry = new Registry();
  return {
    registry,
    requests: new Kind({ ...REQUESTS, registers: [registry] }) as InstanceType<C>,
    reviews: new Kind({ ...REVIEWS, registers: [registry] }) as InstanceType<C>,
  };
}

/** Everything a scrape shows, as text and as JSON. */
async function exposition(registry: Registry): Promise<{ text: string; json: unknown }> {
  return { text: await registry.metrics(), json: await registry.getMetricsAsJSON() };
}

const METHODS = ['GET', 'POST', 'other'];
const ROUTES = ['/oauth/authenticate', 'unmatched', '/a "quoted" \\ route\n'];
const STATUSES = ['200', '401', '404'];

describe('SeriesCounter', () => {
  it('exposes exactly what prom-client’s own inc gives: values and series order, resets and removes included', async () => {
    const next = random(0x5e71e5);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
    const reference = counters(Counter);
    const handled = counters(SeriesCounter);
    const handles = new Map<string, () => void>();
    const handle = (labels: RequestLabels): (() => void) => {
      const key = `${labels.method} ${labels.route} ${labels.status}`;
      let count = handles.get(key);
      if (count === undefined) {
        count = handled.requests.series(labels);
        handles.set(key, count);
      }
      return count;
    };
    const outcomes = {
      authenticated: handled.reviews.series({ outcome: 'authenticated' }),
      denied: handled.reviews.series({ outcome: 'denied' }),
    };
    let scrapes = 0;
    for (let step = 0; step < 5_000; step++) {
      const labels = { method: pick(METHODS), route: pick(ROUTES), status: pick(STATUSES) };
      const outcome = pick(['authenticated', 'denied'] as const);
      const roll = next();
      if (roll < 0.005) {
        reference.registry.resetMetrics();
        handled.registry.resetMetrics();
      } else if (roll < 0.01) {
        reference.requests.remove(labels);
        handled.requests.remove(labels);
      } else if (roll < 0.015) {
        const values = [labels.method, labels.route, labels.status];
        reference.requests.remove(...values);
        handled.requests.remove(...values);
      } else if (roll < 0.1) {
        // prom-client's own calls on the series counter too: both must land in the same series.
        const by = Math.floor(next() * 3) + 1;
        reference.requests.inc(labels, by);
        handled.requests.inc(labels, by);
        reference.reviews.inc({ outcome });
        handled.reviews.inc({ outcome });
      } else {
        reference.requests.inc(labels);
        handle(labels)();
        reference.reviews.inc({ outcome });
        outcomes[outcome]();
      }
      if (next() < 0.01 || step === 4_999) {
        scrapes++;
        expect(await exposition(handled.registry)).toEqual(await exposition(reference.registry));
      }
    }
    expect(scrapes).toBeGreaterThan(20);
    const { text } = await exposition(handled.registry);
    expect(text).toContain('idgate_token_reviews_total{outcome="denied"}');
    expect(text).toContain('route="/a \\"quoted\\" \\\\ route\\n"');
  });

  it('hands its counts over on every kind of read of the counter', async () => {
    const { registry, requests } = counters(SeriesCounter);
    const count = requests.series({ method: 'GET', route: '/x', status: '200' });
    const value = async () => (await requests.get()).values[0]?.value;
    count();
    count();
    expect(await value()).toBe(2);
    count();
    expect(await registry.getSingleMetricAsString(REQUESTS.name)).toContain(
      'idgate_http_requests_total{method="GET",route="/x",status="200"} 3',
    );
    count();
    expect(await registry.metrics()).toContain('status="200"} 4');
    count();
    expect((await registry.getMetricsAsJSON())[0]?.values).toEqual([
      { value: 5, labels: { method: 'GET', route: '/x', status: '200' } },
    ]);
  });

  it('refuses what prom-client refuses: an unknown label', () => {
    const { requests } = counters(SeriesCounter);
    const count = requests.series({ method: 'GET', nope: 'x' } as never);
    expect(count).toThrow(/not included in initial labelset/);
    expect(count).toThrow(/not included in initial labelset/);
  });
});

const DURATION = {
  name: 'idgate_http_request_duration_seconds',
  help: 'Time to answer HTTP requests, by method and route pattern.',
  labelNames: ['method', 'route'] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
};

describe('SeriesHistogram', () => {
  it('exposes exactly what prom-client’s own histogram gives: buckets, sums, counts, series order, resets', async () => {
    const next = random(0x41570);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
    const referenceRegistry = new Registry();
    const reference = new Histogram({ ...DURATION, registers: [referenceRegistry] });
    // A counter beside it in both registries: the histogram is one metric among others.
    new Counter({ ...REVIEWS, registers: [referenceRegistry] }).inc({ outcome: 'denied' });
    const registry = new Registry();
    const handled = new SeriesHistogram({ ...DURATION, registers: [registry] });
    new Counter({ ...REVIEWS, registers: [registry] }).inc({ outcome: 'denied' });
    const handles = new Map<string, (value: number) => void>();
    let scrapes = 0;
    for (let step = 0; step < 5_000; step++) {
      const labels = { method: pick(METHODS), route: pick(ROUTES) };
      // Durations across every bucket, on its bounds exactly, and past the last one (only +Inf).
      const roll = next();
      const value =
        roll < 0.1
          ? pick(DURATION.buckets)
          : roll < 0.15
            ? 3 + next() * 10
            : roll < 0.2
              ? 0
              : next() ** 4 * 2;
      if (next() < 0.003) {
        referenceRegistry.resetMetrics();
        registry.resetMetrics();
      }
      reference.observe(labels, value);
      if (next() < 0.1) {
        handled.observe(labels, value);
      } else {
        const key = `${labels.method} ${labels.route}`;
        let observe = handles.get(key);
        if (observe === undefined) {
          observe = handled.series(labels);
          handles.set(key, observe);
        }
        observe(value);
      }
      if (next() < 0.01 || step === 4_999) {
        scrapes++;
        expect(await exposition(registry)).toEqual(await exposition(referenceRegistry));
      }
    }
    expect(scrapes).toBeGreaterThan(20);
    const { text } = await exposition(registry);
    expect(text).toMatch(
      /idgate_http_request_duration_seconds_bucket\{le="\+Inf",method="[^"]+",route="[^"]*"/,
    );
    expect(text).toMatch(/idgate_http_request_duration_seconds_sum\{method=/);
  });

  it('refuses what prom-client refuses: an unknown label, a value that is not a number, an le label', () => {
    const histogram = new SeriesHistogram({ ...DURATION, registers: [] });
    expect(() => histogram.series({ method: 'GET', nope: 'x' } as never)).toThrow(
      /not included in initial labelset/,
    );
    const observe = histogram.series({ method: 'GET', route: '/x' });
    expect(() => observe(Number.NaN)).toThrow(TypeError);
    expect(() => observe(Number.POSITIVE_INFINITY)).toThrow(TypeError);
    expect(() => new SeriesHistogram({ ...DURATION, labelNames: ['le'], registers: [] })).toThrow(/reserved/);
  });

  it('shows a series only once it has been observed, and again after a reset only once observed again', async () => {
    const registry = new Registry();
    const histogram = new SeriesHistogram({ ...DURATION, registers: [registry] });
    const a = histogram.series({ method: 'GET', route: '/a' });
    const b = histogram.series({ method: 'GET', route: '/b' });
    expect((await histogram.get()).values).toEqual([]);
    b(0.002);
    a(0.2);
    const routes = async () => [...new Set((await histogram.get()).values.map((v) => v.labels.route))];
    expect(await routes()).toEqual(['/b', '/a']);
    registry.resetMetrics();
    expect(await routes()).toEqual([]);
    a(0.2);
    expect(await routes()).toEqual(['/a']);
    expect(await registry.metrics()).toContain(
      'idgate_http_request_duration_seconds_count{method="GET",route="/a"} 1',
    );
  });
});
