import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { onTestFinished, TestRunner } from 'vitest';

/**
 * What a test starts ends with the test, however it ends. A test that stops its child process at
 * the end of its body leaves it running when an assertion fails (or the test times out) before
 * that line; the helpers here register the stop with the test itself instead, so it runs after
 * the test passed, failed or timed out. `no-leftover-processes.ts` remains the net for whatever a
 * file still leaves behind.
 */

/** A process found in /proc: its pid and command line (empty for a zombie). */
export interface ProcessEntry {
  pid: number;
  command: string;
}

/** Every process below `root` (children, their children, ...), read from /proc; none off Linux. */
export function descendants(root: number): ProcessEntry[] {
  const children = new Map<number, ProcessEntry[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return []; // not Linux: nothing to read
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after the last ')'
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      const list = children.get(ppid) ?? [];
      list.push({ pid: Number(entry), command });
      children.set(ppid, list);
    } catch {
      // gone while reading
    }
  }
  const found: ProcessEntry[] = [];
  const queue = [root];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

/** SIGKILL to each of `processes`, those already gone aside. */
export function killAll(processes: ProcessEntry[]): void {
  for (const { pid } of processes) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/**
 * Kills `child` and every process below it (SIGKILL: kubectl's plugin, a shell's command) unless
 * it has exited, and waits for `child` to exit. The processes below are read before the kill:
 * once `child` is gone they belong to init and can no longer be told apart.
 */
export async function killTree(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const below = descendants(child.pid);
  child.kill('SIGKILL');
  killAll(below);
  await exited;
}

/**
 * Runs `stop` once the test running now has ended, passed, failed or timed out (vitest's
 * `onTestFinished`), so that what it started does not outlive it. `stop` must do nothing when the
 * test stopped it already. Outside a test (a `beforeAll` hook) this does nothing: what a hook
 * starts belongs to the file, and the file's `afterAll` stops it.
 */
export function stopWhenTestEnds(stop: () => Promise<unknown> | unknown): void {
  if (TestRunner.getCurrentTest() === undefined) return;
  onTestFinished(async () => {
    await stop();
  });
}

/**
 * `child`, killed with everything it started ({@link killTree}) once the test that spawned it
 * has ended, if it is still running then: `endsWithTest(spawn(...))`.
 */
export function endsWithTest<T extends ChildProcess>(child: T): T {
  stopWhenTestEnds(() => killTree(child));
  return child;
}
