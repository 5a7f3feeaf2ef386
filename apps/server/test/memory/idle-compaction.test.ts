import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startIdleCompaction, v8FullCollection } from '../../src/idle-compaction.js';

/** The built module, run by a process of its own with the flag (`pnpm build` first). */
const MODULE = fileURLToPath(new URL('../../dist/idle-compaction.js', import.meta.url));

/** Event loop utilizations, one per period, as `performance.eventLoopUtilization` reports deltas. */
function loop(periods: number[]) {
  let index = -1;
  return (previous?: unknown) => {
    if (previous === undefined) return { idle: 0, active: 0, utilization: 0 };
    index += 1;
    return { idle: 0, active: 0, utilization: periods[index] ?? 0 };
  };
}

/** A young generation of 16 MiB that a collection shrinks to 1 MiB. */
function shrinking(collect: { mock: { calls: unknown[] } }) {
  return () => (collect.mock.calls.length === 0 ? 16 : 1) * 2 ** 20;
}

describe('idle compaction', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('collects once when the server has been quiet for five periods after start-up', () => {
    const collect = vi.fn();
    const compaction = startIdleCompaction({
      collect,
      youngGeneration: shrinking(collect),
      utilization: loop([]),
      periodMs: 1000,
    });
    vi.advanceTimersByTime(4000);
    expect(collect).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1000);
    expect(collect).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(60_000);
    expect(collect).toHaveBeenCalledTimes(1);
    compaction.stop();
  });

  it('never collects under load, and once after the load ends', () => {
    const collect = vi.fn();
    const busy = Array.from({ length: 30 }, () => 0.9);
    const compaction = startIdleCompaction({
      collect,
      youngGeneration: shrinking(collect),
      utilization: loop(busy),
      periodMs: 1000,
    });
    vi.advanceTimersByTime(30_000);
    expect(collect).not.toHaveBeenCalled();
    vi.advanceTimersByTime(5000);
    expect(collect).toHaveBeenCalledTimes(1);
    compaction.stop();
  });

  it('starts its quiet count again when a busy period interrupts it', () => {
    const collect = vi.fn();
    const compaction = startIdleCompaction({
      collect,
      youngGeneration: shrinking(collect),
      utilization: loop([0, 0, 0, 0, 0.5, 0, 0, 0, 0]),
      periodMs: 1000,
    });
    vi.advanceTimersByTime(9000);
    expect(collect).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1000);
    expect(collect).toHaveBeenCalledTimes(1);
    compaction.stop();
  });

  it('tries again in the next quiet spells while V8 keeps its young generation, three times at most', () => {
    const collect = vi.fn();
    const compaction = startIdleCompaction({
      collect,
      youngGeneration: () => 16 * 2 ** 20,
      utilization: loop([]),
      periodMs: 1000,
    });
    vi.advanceTimersByTime(5000);
    expect(collect).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(5000);
    expect(collect).toHaveBeenCalledTimes(2);
    vi.advanceTimersByTime(60_000);
    expect(collect).toHaveBeenCalledTimes(3);
    compaction.stop();
  });

  it('stops looking once stopped', () => {
    const collect = vi.fn();
    startIdleCompaction({
      collect,
      youngGeneration: shrinking(collect),
      utilization: loop([]),
      periodMs: 1000,
    }).stop();
    vi.advanceTimersByTime(60_000);
    expect(collect).not.toHaveBeenCalled();
  });
});

describe('V8 full collection', () => {
  it('is off without --expose-gc, and never turns the flag on at run time', () => {
    // Vitest's workers run without the flag.
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
    expect(v8FullCollection()).toBeUndefined();
    const compaction = startIdleCompaction();
    expect(compaction.active).toBe(false);
    compaction.stop();
    // A flag set after start-up holds for every context created later (Node.js: undefined behaviour).
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });

  it('frees unreachable objects in a process started with --expose-gc, as `pnpm start` starts the server', async () => {
    if (!existsSync(MODULE)) throw new Error('dist/idle-compaction.js is missing: run `pnpm build` first');
    const program = `
      import { startIdleCompaction, v8FullCollection } from ${JSON.stringify(pathToFileURL(MODULE).href)};
      const compaction = startIdleCompaction();
      compaction.stop();
      const collect = v8FullCollection();
      const ref = new WeakRef(Array.from({ length: 200_000 }, (_, i) => ({ i })));
      // A WeakRef keeps its target until the job that made it ends.
      await new Promise((resolve) => setImmediate(resolve));
      collect?.();
      console.log(JSON.stringify({ active: compaction.active, freed: ref.deref() === undefined }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--expose-gc',
      '--input-type=module',
      '--eval',
      program,
    ]);
    expect(JSON.parse(stdout)).toEqual({ active: true, freed: true });
  });
});
