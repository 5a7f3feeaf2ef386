import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditFollowTiming } from '../../src/audit/follow-timing.js';
import { loadConfig } from '../../src/config.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const timing = (env: Record<string, string>) => auditFollowTiming(loadConfig({ env }).audit);

describe('how the live tail of the audit trail reads the table', () => {
  it('reads every second, 10 s back, with a keep-alive every 15 s by default', () => {
    expect(timing({})).toEqual({ intervalMs: 1000, windowMs: 10_000, heartbeatMs: 15_000 });
  });

  it('looks back past the TokenReview writer when every review is its own event', () => {
    // Those events commit up to one interval after their occurredAt: a 10 s window would step
    // over a review decided 60 s before its batch committed.
    expect(timing({ IDGATE_AUDIT_TOKEN_REVIEW: 'all' }).windowMs).toBe(70_000);
    expect(
      timing({ IDGATE_AUDIT_TOKEN_REVIEW: 'all', IDGATE_AUDIT_TOKEN_REVIEW_INTERVAL: '5' }).windowMs,
    ).toBe(15_000);
    // Aggregated events are stamped when written: the default window is enough.
    expect(timing({ IDGATE_AUDIT_TOKEN_REVIEW_INTERVAL: '300' }).windowMs).toBe(10_000);
  });

  it('takes the settings as given, the window too', () => {
    expect(
      timing({
        IDGATE_AUDIT_STREAM_POLL_INTERVAL: '3',
        IDGATE_AUDIT_STREAM_WINDOW: '120',
        IDGATE_AUDIT_STREAM_HEARTBEAT: '30',
        IDGATE_AUDIT_TOKEN_REVIEW: 'all',
      }),
    ).toEqual({ intervalMs: 3000, windowMs: 120_000, heartbeatMs: 30_000 });
  });
});

// The heartbeat is the route's, whatever the database: SQLite alone.
describe.each(testDatabaseUrls().slice(0, 1))('the live tail over HTTP on $name', (kind) => {
  let t: TestServer;
  let apiKey: string;
  beforeAll(async () => {
    t = await startTestServer(kind, { audit: { stream: { heartbeat: 1 } } });
    apiKey = await t.addApiKey(['admin']);
  });
  afterAll(async () => t?.close());

  it('sends its keep-alive comment at the configured heartbeat', async () => {
    const abort = new AbortController();
    const response = await fetch(`${t.baseUrl}/admin/v1/events/stream`, {
      headers: { authorization: `Bearer ${apiKey}` },
      signal: abort.signal,
    });
    expect(response.status).toBe(200);
    const body = response.body;
    if (body === null) throw new Error('no body');
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    // The default heartbeat is 15 s: with 1 s, the comment comes within the test's time.
    while (!text.includes(': keep-alive\n\n')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    abort.abort();
    // The stream's starting position (an id without an event), then the comment.
    expect(text).toMatch(/^: idgate audit stream\n\nid: [0-9A-HJKMNP-TV-Z]{26}\n\n: keep-alive\n\n$/);
  }, 10_000);
});
