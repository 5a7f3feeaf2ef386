import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { onTestFinished } from 'vitest';

/**
 * A port of 127.0.0.1 that refuses every connection (ECONNREFUSED) until the test calling this
 * ends: the local end of a connection this process opens to itself and keeps open. Nothing
 * listens on that port, and no other process can listen on it while the connection holds it
 * (EADDRINUSE). A port a test closed itself, or a well-known one like 9, may instead be taken by
 * whatever else runs on the machine before the test connects to it.
 */
export async function refusingPort(): Promise<number> {
  const accepted: Socket[] = [];
  const server = createServer((socket) => {
    accepted.push(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  const holder = connect(address.port, '127.0.0.1');
  await once(holder, 'connect');
  const port = holder.localPort;
  if (port === undefined) throw new Error('no local port');
  onTestFinished(async () => {
    holder.destroy();
    for (const socket of accepted) socket.destroy();
    server.close();
    await once(server, 'close');
  });
  return port;
}
