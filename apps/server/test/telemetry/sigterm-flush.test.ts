import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endsWithTest } from '../helpers/child-processes.js';
import { type TestDatabase, testDatabaseUrls } from '../helpers/databases.js';
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { freePort } from '../helpers/server.js';

const BIN = fileURLToPath(new URL('../../dist/bin.js', import.meta.url));

describe('idgate serve with the standard OTEL_* variables', () => {
  let receiver: OtlpReceiver;
  let database: TestDatabase;

  beforeAll(async () => {
    if (!existsSync(BIN)) throw new Error('dist/bin.js is missing: run `pnpm build` first');
    receiver = await startOtlpReceiver();
    const sqlite = testDatabaseUrls().find((kind) => kind.name === 'sqlite');
    if (sqlite === undefined) throw new Error('SQLite is always among the test databases');
    database = await sqlite.create();
  });
  afterAll(async () => {
    await receiver?.stop();
    await database?.drop();
  });

  it('exports the spans still buffered when SIGTERM stops it', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const child = endsWithTest(
      spawn(process.execPath, [BIN, 'serve'], {
        env: {
          PATH: process.env.PATH,
          IDGATE_HOST: '127.0.0.1',
          IDGATE_PORT: String(port),
          IDGATE_ISSUER: `${url}/oauth`,
          IDGATE_DATABASE_URL: database.url,
          IDGATE_SECRET: 'otel-sigterm-secret-0123456789abcdefghij',
          IDGATE_LOG_LEVEL: 'warn',
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_SERVICE_NAME: 'idgate-sigterm',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    const deadline = Date.now() + 20_000;
    while (
      !(await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (Date.now() > deadline) throw new Error(`idgate did not get ready: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const traceId = randomBytes(16).toString('hex');
    const answer = await fetch(`${url}/oauth/keys`, {
      headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    });
    expect(answer.status).toBe(200);
    // Batches leave every 5 s: the span of this request is still in memory when the signal comes.
    child.kill('SIGTERM');
    const [code] = await exited;
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const spans = receiver.spans.filter((span) => span.traceId === traceId);
    expect(spans.map((span) => [span.name, span.service])).toEqual([['GET /oauth/keys', 'idgate-sigterm']]);
  }, 40_000);
});
