import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './server.js';

const run = promisify(execFile);

/** Where Debian's PostgreSQL 15 server binaries live (initdb, pg_ctl). */
const BIN = process.env.IDGATE_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';
/** The OS user the cluster runs as: PostgreSQL refuses to run as root. */
const OS_USER = 'postgres';

/**
 * A PostgreSQL cluster of its own for tests that take the database away: made with `initdb` in a
 * temporary directory, listening on 127.0.0.1 on a free port with trust authentication, run as
 * the `postgres` OS user. Stopping, killing or freezing it touches no other server (never the
 * shared one on 5432).
 */
export interface ThrowawayPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  readonly port: number;
  /** Starts the cluster and resolves once it accepts connections. */
  start(): Promise<void>;
  /** A fast shutdown: clients are told the server is shutting down (57P01) and disconnected. */
  stop(): Promise<void>;
  /** SIGKILL to the postmaster and every backend: connections break without a word. */
  kill(): Promise<void>;
  /**
   * SIGSTOP to the postmaster and its children: the server keeps its sockets open and answers
   * nothing (a frozen VM, a stalled disk). New TCP connections are still accepted by the kernel.
   */
  freeze(): void;
  /** SIGCONT to the processes {@link freeze} stopped. */
  thaw(): void;
  /** stop() then start(). */
  restart(): Promise<void>;
  /** Stops the cluster (thawing it first) and deletes its directory. */
  destroy(): Promise<void>;
}

/** Whether this machine can run a throwaway cluster: PostgreSQL's binaries and root to switch to `postgres`. */
export function canRunThrowawayPostgres(): boolean {
  try {
    readdirSync(BIN);
  } catch {
    return false;
  }
  return process.getuid?.() === 0;
}

const asPostgres = (command: string, args: string[]) =>
  run('runuser', ['-u', OS_USER, '--', join(BIN, command), ...args], { timeout: 60_000 });

/** The pids whose parent is `pid`, from /proc. */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return children;
}

/** Sends `name` to `pid`, unless it has ended meanwhile. */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * Makes (initdb) a throwaway cluster and starts it.
 * @example
 * const pg = await startThrowawayPostgres();
 * pg.freeze(); … pg.thaw();
 * await pg.destroy();
 */
export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'idgate-pg-'));
  const uid = Number((await run('id', ['-u', OS_USER])).stdout.trim());
  const gid = Number((await run('id', ['-g', OS_USER])).stdout.trim());
  chownSync(dir, uid, gid);
  const data = join(dir, 'data');
  const port = await freePort();
  await asPostgres('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  const options = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${dir}`,
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
  ].join(' ');
  const pidOf = () => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let frozen: number[] = [];

  const cluster: ThrowawayPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await asPostgres('pg_ctl', [
        '-D',
        data,
        '-o',
        options,
        '-l',
        join(dir, 'log'),
        '-w',
        '-t',
        '30',
        'start',
      ]);
    },
    async stop() {
      await asPostgres('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
    },
    async kill() {
      const pid = pidOf();
      for (const target of [...childrenOf(pid), pid]) signal(target, 'SIGKILL');
      // Until the postmaster is gone, a new one would refuse to start over its data directory.
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        try {
          process.kill(pid, 0);
        } catch {
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`postmaster ${pid} did not die`);
    },
    freeze() {
      const pid = pidOf();
      // The postmaster first, so it forks no new backend meanwhile.
      signal(pid, 'SIGSTOP');
      frozen = [pid, ...childrenOf(pid)];
      for (const child of frozen.slice(1)) signal(child, 'SIGSTOP');
    },
    thaw() {
      for (const pid of frozen.slice().reverse()) signal(pid, 'SIGCONT');
      frozen = [];
    },
    async restart() {
      await cluster.stop();
      await cluster.start();
    },
    async destroy() {
      cluster.thaw();
      await asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await cluster.start();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return cluster;
}
