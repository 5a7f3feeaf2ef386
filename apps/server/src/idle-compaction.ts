import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';

/** How the event loop was used over a period (`performance.eventLoopUtilization()`). */
type Utilization = ReturnType<typeof performance.eventLoopUtilization>;

export interface IdleCompactionOptions {
  /** How often the event loop's utilization is looked at (ms). */
  periodMs?: number;
  /** A period whose utilization reaches this was busy: the heap may have grown. */
  busyAbove?: number;
  /** After a busy period, this many periods in a row below `busyAbove` make the server idle. */
  quietPeriods?: number;
  /** Runs a full collection; defaults to V8's own (see {@link v8FullCollection}). */
  collect?: () => void;
  /** The event loop's utilization since `previous` (tests); defaults to `performance`'s. */
  utilization?: (previous?: Utilization) => Utilization;
  /** The young generation's size in bytes (tests); defaults to V8's `new_space`. */
  youngGeneration?: () => number;
}

/** Collections tried in one quiet spell when V8 still keeps its young generation at full size. */
const MAX_ATTEMPTS = 3;

/**
 * Gives memory back once the server goes idle after being busy (its start-up, a burst of
 * requests). V8 grows the young generation to its maximum under allocation pressure (two 8 MiB
 * semi-spaces with `--max-semi-space-size=8`) and shrinks it only in a full collection that runs
 * while allocation is slow, which an idle server never triggers: it would keep what its busiest
 * moment needed. One full collection when the event loop has been quiet for `quietPeriods`
 * periods lets V8 shrink the young generation and release the pages it emptied.
 *
 * Nothing runs per request: a timer (unref'd) reads the event loop's utilization once a period.
 * A server under steady load never collects here; one that alternates collects at most once per
 * `quietPeriods + 1` periods. When a collection leaves the young generation at its size (V8 still
 * saw fast allocation), the next quiet spell tries again, at most three times after each busy one.
 * Without a way to collect (`collect`, or `gc` from `--expose-gc`) it does nothing: `active` is false.
 * @example const compaction = startIdleCompaction(); // ... compaction.stop();
 */
export function startIdleCompaction(options: IdleCompactionOptions = {}): { active: boolean; stop(): void } {
  const periodMs = options.periodMs ?? 1000;
  const busyAbove = options.busyAbove ?? 0.05;
  // V8 shrinks the young generation only when it measures slow allocation over its last five
  // seconds: a collection sooner after the busy spell would free garbage but keep the pages.
  const quietPeriods = options.quietPeriods ?? 5;
  const utilization = options.utilization ?? ((previous) => performance.eventLoopUtilization(previous));
  const collect = options.collect ?? v8FullCollection();
  if (collect === undefined) return { active: false, stop: () => {} };
  const youngGeneration = options.youngGeneration ?? newSpaceSize;
  // Start-up grew the heap: the first quiet spell collects.
  let grown = true;
  let quiet = 0;
  let attempts = 0;
  let last = utilization();
  const timer = setInterval(() => {
    const now = utilization();
    const period = utilization(last);
    last = now;
    if (period.utilization >= busyAbove) {
      grown = true;
      quiet = 0;
      attempts = 0;
      return;
    }
    quiet += 1;
    if (grown && quiet >= quietPeriods) {
      const before = youngGeneration();
      collect();
      quiet = 0;
      attempts += 1;
      // Work the loop hardly notices (writing buffered audit events) may still allocate fast
      // enough for V8 to keep its young generation: another quiet spell tries again, a few times.
      if (youngGeneration() < before || attempts >= MAX_ATTEMPTS) grown = false;
    }
  }, periodMs);
  timer.unref();
  return { active: true, stop: () => clearInterval(timer) };
}

function newSpaceSize(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}

/**
 * V8's full collection: the `gc` that `--expose-gc` puts on the global object when the process
 * starts with it (`pnpm start`, deploy/Dockerfile); undefined without the flag, and then the idle
 * compaction stays off (a flag set after start-up is undefined behaviour in Node.js).
 */
export function v8FullCollection(): (() => void) | undefined {
  const gc: unknown = (globalThis as { gc?: unknown }).gc;
  return typeof gc === 'function' ? (gc as () => void) : undefined;
}
