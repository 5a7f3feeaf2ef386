import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export { refusingPort } from '../../../../packages/sdk/test/refusing-port.js';

/**
 * The first port of the range Linux hands out for `listen(0)` and for outgoing connections
 * (`ip_local_port_range`), or the default, 32768.
 */
function ephemeralPortsFrom(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 1024) return low;
  } catch {
    // not Linux
  }
  return 32768;
}

/**
 * A port of 127.0.0.1 for a child process to listen on (`--listen-address`): free now, and below
 * the ports the kernel hands out by itself. A port found by listening on port 0 and closing is
 * one of those, and another test's server or any outgoing connection may be given it before the
 * child binds it; one below that range is taken only by a program that names it.
 */
export async function portForAChild(): Promise<number> {
  const below = ephemeralPortsFrom();
  const from = Math.max(1025, below - 12_000);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = from + Math.floor(Math.random() * (below - from));
    const probe = createServer();
    const free = await new Promise<boolean>((resolve) => {
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (free) {
      await new Promise<void>((resolve) => probe.close(() => resolve()));
      return port;
    }
  }
  throw new Error(`no free port of 127.0.0.1 between ${from} and ${below}`);
}
