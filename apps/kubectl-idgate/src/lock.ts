import { randomBytes } from 'node:crypto';
import { link, open, readFile, rename, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { PluginError } from './errors.js';

/** What a lock file holds: who took it and when, to tell a live holder from a crashed one. */
interface LockOwner {
  pid: number;
  host: string;
  createdAt: number;
}

export interface LockOptions {
  /** Give up waiting after this many milliseconds. */
  waitMs?: number;
  /** A lock older than this is taken over even when its holder cannot be checked (another host). */
  staleMs?: number;
  /** Milliseconds between two attempts. */
  pollMs?: number;
}

const DEFAULTS = { waitMs: 15 * 60_000, staleMs: 20 * 60_000, pollMs: 50 };

/**
 * Runs `task` holding the lock file `path` (created with O_EXCL, so one process at a time holds
 * it), and removes it afterwards. A lock whose holder died (its pid is gone on this host) or that
 * is older than `staleMs` is taken over.
 * @throws {PluginError} after `waitMs` without getting the lock, or when the folder is not writable.
 */
export async function withLock<T>(
  path: string,
  task: () => Promise<T>,
  options: LockOptions = {},
): Promise<T> {
  const { waitMs, staleMs, pollMs } = { ...DEFAULTS, ...options };
  const me: LockOwner = { pid: process.pid, host: hostname(), createdAt: Date.now() };
  const deadline = Date.now() + waitMs;
  for (;;) {
    if (await tryCreate(path, me)) break;
    const owner = await readOwner(path);
    if (owner === 'gone') continue;
    if (owner !== undefined && isStale(owner, staleMs)) {
      await takeOver(path, owner);
      continue;
    }
    if (Date.now() >= deadline) {
      throw new PluginError(
        `timed out waiting for the token cache lock ${path}, held by process ${owner?.pid ?? '?'}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs + Math.floor(Math.random() * pollMs)));
  }
  try {
    return await task();
  } finally {
    await unlink(path).catch(() => undefined);
  }
}

async function tryCreate(path: string, owner: LockOwner): Promise<boolean> {
  try {
    const file = await open(path, 'wx', 0o600);
    try {
      await file.writeFile(JSON.stringify(owner));
    } finally {
      await file.close();
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new PluginError(
      `cannot create the token cache lock ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`,
      {
        cause: error,
      },
    );
  }
}

/** The lock's owner; `undefined` when the file is being written (empty) or unreadable; `'gone'` when it vanished. */
async function readOwner(path: string): Promise<LockOwner | undefined | 'gone'> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    return undefined;
  }
  try {
    const owner = JSON.parse(text) as Partial<LockOwner>;
    if (
      typeof owner.pid === 'number' &&
      typeof owner.host === 'string' &&
      typeof owner.createdAt === 'number'
    ) {
      return owner as LockOwner;
    }
  } catch {
    // being written right now, or garbage: judged by age below
  }
  return undefined;
}

function isStale(owner: LockOwner | undefined, staleMs: number): boolean {
  if (owner === undefined) return false;
  if (Date.now() - owner.createdAt > staleMs) return true;
  if (owner.host !== hostname()) return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Removes a stale lock without removing a fresh one another process made meanwhile: the file is
 * first moved aside (atomic), then checked to be the stale one; a fresh lock is put back.
 */
async function takeOver(path: string, stale: LockOwner): Promise<void> {
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch {
    return; // someone else moved it first
  }
  const moved = await readOwner(aside);
  if (
    moved !== 'gone' &&
    moved !== undefined &&
    (moved.pid !== stale.pid || moved.createdAt !== stale.createdAt)
  ) {
    await link(aside, path).catch(() => undefined);
  }
  await unlink(aside).catch(() => undefined);
}
