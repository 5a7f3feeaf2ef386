import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SeriesCounter } from '../../src/metric-series.js';
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
