import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { freePort, startTestServer, type TestServer } from '../helpers/server.js';

describe.each(testDatabaseUrls())('OpenTelemetry off by default on $name', (kind) => {
  let receiver: OtlpReceiver;
  let t: TestServer;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    t = await startTestServer(kind);
  });
  afterAll(async () => {
    await receiver?.stop();
  });

  it('starts no tracing without an endpoint and sends nothing, even at shutdown', async () => {
    expect(t.server.services.tracing).toBeUndefined();
    const adminKey = await t.addApiKey(['admin']);
    const traceparent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
    const answer = await fetch(`${t.baseUrl}/admin/v1/users`, {
      headers: { authorization: `Bearer ${adminKey}`, traceparent },
    });
    expect(answer.status).toBe(200);
    // Nothing of the trace context leaks into the answer either.
    expect(answer.headers.get('traceparent')).toBeNull();
    await t.close();
    expect(receiver.requests).toEqual([]);
  });
});

describe('OpenTelemetry over OTLP/HTTP with protobuf (the standard default protocol)', () => {
  let receiver: OtlpReceiver;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(async () => {
    await receiver?.stop();
  });

  it('posts protobuf exports to {endpoint}/v1/traces, flushed at shutdown', async () => {
    const sqlite = testDatabaseUrls().find((kind) => kind.name === 'sqlite');
    if (sqlite === undefined) throw new Error('SQLite is always among the test databases');
    const t = await startTestServer(sqlite, {
      otel: { endpoint: `${receiver.endpoint}/`, serviceName: 'idgate-proto-test' },
    });
    const traceId = randomBytes(16);
    await fetch(`${t.baseUrl}/healthz`, {
      headers: { traceparent: `00-${traceId.toString('hex')}-${randomBytes(8).toString('hex')}-01` },
    });
    await t.close();
    expect(receiver.requests.length).toBeGreaterThan(0);
    const [request] = receiver.requests;
    expect(request).toMatchObject({
      method: 'POST',
      path: '/v1/traces',
      contentType: 'application/x-protobuf',
    });
    // Protobuf carries ids as raw bytes and names as UTF-8: both are in the body as sent.
    const body = Buffer.concat(receiver.requests.map((r) => r.body));
    expect(body.includes(traceId)).toBe(true);
    expect(body.includes(Buffer.from('GET /healthz'))).toBe(true);
    expect(body.includes(Buffer.from('idgate-proto-test'))).toBe(true);
  });
});

describe('OpenTelemetry with a collector that does not answer', () => {
  it('keeps serving, says so in its log once, and shuts down cleanly', async () => {
    const sqlite = testDatabaseUrls().find((kind) => kind.name === 'sqlite');
    if (sqlite === undefined) throw new Error('SQLite is always among the test databases');
    // A port nothing listens on: every export is refused.
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    const t = await startTestServer(sqlite, { otel: { endpoint, protocol: 'http/json' } });
    try {
      for (let i = 0; i < 2; i++) {
        expect((await fetch(`${t.baseUrl}/healthz`)).status).toBe(200);
        await t.server.services.tracing?.flush();
      }
      const warnings = t.logs.filter((line) => line.includes('OpenTelemetry:'));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0] as string)).toMatchObject({ level: 40 });
    } finally {
      await t.close();
    }
  });
});
