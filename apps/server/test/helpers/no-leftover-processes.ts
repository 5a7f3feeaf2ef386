import { readdirSync, readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { afterAll } from 'vitest';

/**
 * A setup file (vitest `setupFiles`): whatever a test file started (an `idgate serve`, slapd,
 * kubectl, a browser) must not outlive it, even when a test failed or a hook timed out before its
 * own clean-up ran. After the file's own `afterAll` hooks, every process still below this worker
 * is killed and named on stderr; when the worker exits, anything started after that goes too.
 * Each test file runs in a process of its own (vitest's `forks` pool), so what lies below it is
 * the file's alone.
 */

interface Leftover {
  pid: number;
  command: string;
}

/** Every process below `root` (children, their children, ...), read from /proc. */
function descendants(root: number): Leftover[] {
  const children = new Map<number, Leftover[]>();
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
  const found: Leftover[] = [];
  const queue = [root];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

function killAll(processes: Leftover[]): void {
  for (const { pid } of processes) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

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
  process.once('exit', () => killAll(descendants(process.pid)));
}
