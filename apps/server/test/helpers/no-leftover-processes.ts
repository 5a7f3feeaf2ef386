import { isMainThread } from 'node:worker_threads';
import { afterAll } from 'vitest';
import { descendants, killAll } from './child-processes.js';

/**
 * A setup file (vitest `setupFiles`): whatever a test file started (an `idgate serve`, slapd,
 * kubectl, a browser) must not outlive it, even when a test failed or a hook timed out before its
 * own clean-up ran. Tests stop what they start when they end (`child-processes.ts`); this is the
 * net for what is left. After the file's own `afterAll` hooks, every process still below this worker
 * is killed and named on stderr; when the worker exits, anything started after that goes too.
 * A worker process (vitest's `forks` pool) runs one test file at a time, so what lies below it
 * when a file ends is that file's.
 */

// In a worker thread, process.pid is vitest's own process: its children are the other workers.
if (isMainThread) {
  afterAll(() => {
    const left = descendants(process.pid).filter((p) => p.command !== '');
    if (left.length === 0) return;
    killAll(left);
    console.warn(
      `killed ${left.length} process(es) this test file left running:\n${left
        .map((p) => `  ${p.pid} ${p.command.slice(0, 200)}`)
        .join('\n')}`,
    );
  });
  // Once per worker process, which runs one test file after another (isolate: false).
  const once = Symbol.for('idgate.test.kill-descendants-at-exit');
  const registry = globalThis as { [once]?: true };
  if (registry[once] === undefined) {
    registry[once] = true;
    process.once('exit', () => killAll(descendants(process.pid)));
  }
}
