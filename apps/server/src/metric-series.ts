import { Counter, type CounterConfiguration, type LabelValues } from 'prom-client';

// prom-client's `inc` (its `labels()` children too) checks and hashes the label set on every call:
// about half a microsecond, on every request. A series handle counts in a plain number instead,
// and prom-client gets the counts when the counter is collected (a scrape), through its public
// `inc`. Only whole numbers are added, so the totals are exact whenever they are handed over.

interface Series<T extends string> {
  readonly labels: LabelValues<T>;
  /** Whether prom-client holds the series (it may drop it: `reset`, `remove`). */
  held: boolean;
  /** Counted here and not yet handed to prom-client. */
  pending: number;
}

function handOver<T extends string>(counter: Counter<T>, series: readonly Series<T>[]): void {
  for (const entry of series) {
    if (entry.pending === 0) continue;
    counter.inc(entry.labels, entry.pending);
    entry.pending = 0;
  }
}

/**
 * A prom-client counter with cheap series handles for label sets counted on every request. Its
 * exposition is what prom-client's own `inc` calls would give: same values, same series order
 * (a series' first count goes straight to prom-client, so it is created exactly when `inc` would
 * create it), and a registry reset or `remove` drops what was counted before it. Handles are kept
 * for the counter's life: make them for bounded label sets only.
 */
export class SeriesCounter<T extends string = string> extends Counter<T> {
  readonly #series: Series<T>[];

  constructor(configuration: Omit<CounterConfiguration<T>, 'collect'>) {
    const series: Series<T>[] = [];
    super({
      ...configuration,
      collect() {
        handOver(this, series);
      },
    });
    this.#series = series;
  }

  /**
   * A function that adds one to the series of `labels`, as `inc(labels)` does. An unknown label
   * throws on the first call, as `inc` does.
   * @example const count = metrics.httpRequests.series({ method: 'GET', route: '/x', status: '200' }); count();
   */
  series(labels: LabelValues<T>): () => void {
    const entry: Series<T> = { labels, held: false, pending: 0 };
    this.#series.push(entry);
    return () => {
      if (entry.held) {
        entry.pending += 1;
      } else {
        this.inc(labels);
        entry.held = true;
      }
    };
  }

  override reset(): void {
    super.reset();
    // prom-client's constructor resets the counter before this class has its fields.
    if (!(#series in this)) return;
    for (const entry of this.#series) {
      entry.pending = 0;
      entry.held = false;
    }
  }

  override remove(...values: string[]): void;
  override remove(labels: LabelValues<T>): void;
  override remove(...args: [LabelValues<T>] | string[]): void {
    // The other series keep every count; the removed one starts again from its next count.
    handOver(this, this.#series);
    super.remove(...(args as string[]));
    for (const entry of this.#series) entry.held = false;
  }
}
