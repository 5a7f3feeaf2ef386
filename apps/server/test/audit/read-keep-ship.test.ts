import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AuditEventDraft, recordAuditEvent } from '@idgate/core';
import { AuditEvent } from '@idgate/schema';
import { createIdgateAdminClient } from '@idgate/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPurgeJob } from '../../src/maintenance.js';
import { envFor, runInProcess } from '../cli/support.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, TEST_SECRET, type TestServer, testClock } from '../helpers/server.js';

const PASSWORD = 'correct-horse-audit-read-91';
const actor = { kind: 'cli', id: null } as const;

// Everything that reads, keeps and ships audit events, over real HTTP on SQLite and PostgreSQL:
// the listing (REST, SDK, CLI), the live stream, the JSON-lines file written only after commit,
// personal data hashed or omitted before storage, and the retention purge.
describe.each(testDatabaseUrls())('reading, keeping and shipping audit events on $name', (kind) => {
  let t: TestServer;
  let adminKey: string;
  let userId: string;
  let logFile: string;
  const clock = testClock();
  const secrets: string[] = [PASSWORD];
  const admin = () => createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: adminKey });
  const get = (path: string) =>
    fetch(`${t.baseUrl}${path}`, { headers: { authorization: `Bearer ${adminKey}` } });
  const fileEvents = () =>
    readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => AuditEvent.parse(JSON.parse(line)));

  beforeAll(async () => {
    logFile = join(mkdtempSync(join(tmpdir(), 'idgate-audit-')), 'audit.jsonl');
    t = await startTestServer(
      kind,
      { audit: { log: logFile }, tokens: { refreshReuseWindow: 0 } },
      { clock },
    );
    userId = await t.addUser('ana', PASSWORD, { email: 'ana@example.test' });
    adminKey = await t.addApiKey(['admin']);
    secrets.push(adminKey);
    for (const groups of [['a'], ['a', 'b'], ['b']]) {
      const response = await fetch(`${t.baseUrl}/admin/v1/users/ana`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ groups }),
      });
      expect(response.status).toBe(200);
    }
  });
  afterAll(async () => t?.close());

  it('lists events through REST, page by page, filtered by username and type', async () => {
    // The harness creates the user (a system change), then three changes over the API.
    const first = await get('/admin/v1/events?user=ana&type=admin.changed&limit=2');
    expect(first.status).toBe(200);
    const page = (await first.json()) as { items: AuditEvent[]; nextCursor: string };
    expect(page.items.map((e) => [e.type, e.subject])).toEqual([
      ['admin.changed', userId],
      ['admin.changed', userId],
    ]);
    const second = (await (
      await get(`/admin/v1/events?user=ana&type=admin.changed&limit=2&cursor=${page.nextCursor}`)
    ).json()) as { items: AuditEvent[]; nextCursor: string | null };
    expect(second.items.map((e) => e.actor.kind)).toEqual(['api-key', 'api-key']);
    expect(second.nextCursor).toBeNull();
    // The user id finds the same events as the username.
    const byId = (await (await get(`/admin/v1/events?user=${userId}&type=admin.changed`)).json()) as {
      items: AuditEvent[];
    };
    expect(byId.items.map((e) => e.id)).toEqual([...page.items, ...second.items].map((e) => e.id));
  });

  it('refuses bad filters with problems that name the field', async () => {
    for (const [query, field] of [
      ['type=sign-in.nope', 'type'],
      ['since=yesterday', 'since'],
      ['limit=0', 'limit'],
      ['cursor=!!', 'cursor'],
      ['since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z', 'until'],
    ] as const) {
      const response = await get(`/admin/v1/events?${query}`);
      expect(response.status, query).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(((await response.json()) as { detail: string }).detail).toMatch(new RegExp(`^${field}\\b`));
    }
    expect((await fetch(`${t.baseUrl}/admin/v1/events`)).status).toBe(401);
  });

  it('gives the same events through the SDK and the CLI', async () => {
    const rest = (await (await get('/admin/v1/events?type=admin.changed')).json()) as { items: AuditEvent[] };
    const sdk = await admin().listEvents({ type: 'admin.changed' });
    expect(sdk.items).toEqual(rest.items);
    const all = [];
    for await (const event of admin().eachEvent({ type: ['admin.changed'], limit: 1 })) all.push(event);
    expect(all).toEqual(rest.items);
    const cli = await runInProcess(['audit', '--type', 'admin.changed', '--json'], {
      env: envFor(t.database.url, { IDGATE_SECRET: TEST_SECRET }),
    });
    expect(cli.code, cli.stderr).toBe(0);
    const lines = cli.stdout.trim().split('\n');
    expect(lines.map((line) => AuditEvent.parse(JSON.parse(line)))).toEqual(rest.items);
    const table = await runInProcess(['audit', '--user', 'ana', '--since', '1h'], {
      env: envFor(t.database.url, { IDGATE_SECRET: TEST_SECRET }),
    });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^OCCURRED\s+TYPE\s+OUTCOME/);
    expect(table.stdout.match(/admin\.changed/g)).toHaveLength(4);
  });

  it('finds a password sign-in and a refresh reuse, in order, alike through REST, the SDK and the CLI', async () => {
    const client = await t.addClient({
      trusted: true,
      grants: ['password', 'refresh_token'],
      scopes: ['openid', 'offline_access'],
    });
    secrets.push(client.clientSecret);
    const since = new Date(clock.now()).toISOString();
    const token = async (form: Record<string, string>) => {
      const response = await fetch(`${t.baseUrl}/oauth/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams(form).toString(),
      });
      const body = (await response.json()) as Record<string, string>;
      for (const key of ['access_token', 'refresh_token', 'id_token']) if (body[key]) secrets.push(body[key]);
      return { status: response.status, body };
    };
    const signedIn = await token({
      grant_type: 'password',
      username: 'ana',
      password: PASSWORD,
      scope: 'openid offline_access',
    });
    expect(signedIn.status).toBe(200);
    const refresh = signedIn.body.refresh_token as string;
    expect((await token({ grant_type: 'refresh_token', refresh_token: refresh })).status).toBe(200);
    expect((await token({ grant_type: 'refresh_token', refresh_token: refresh })).status).toBe(400);
    const expected = [
      ['sign-in.succeeded', 'success'],
      ['token.issued', 'success'],
      ['refresh.rotated', 'success'],
      ['token.issued', 'success'],
      ['refresh.reuse-detected', 'failure'],
    ];
    const rest = (await (await get(`/admin/v1/events?user=ana&since=${since}`)).json()) as {
      items: AuditEvent[];
    };
    expect(rest.items.map((e) => [e.type, e.outcome])).toEqual(expected);
    expect(rest.items.every((e) => e.subject === userId && e.clientId === client.clientId)).toBe(true);
    expect((await admin().listEvents({ user: 'ana', since })).items).toEqual(rest.items);
    const cli = await runInProcess(['audit', '--user', 'ana', '--since', since, '--json'], {
      env: envFor(t.database.url, { IDGATE_SECRET: TEST_SECRET }),
    });
    expect(
      cli.stdout
        .trim()
        .split('\n')
        .map((line) => AuditEvent.parse(JSON.parse(line))),
    ).toEqual(rest.items);
  });

  it('streams an event made after the stream opened, also one made by another process on the database', async () => {
    const abort = new AbortController();
    const seen: AuditEvent[] = [];
    const following = (async () => {
      for await (const event of admin().followEvents({ type: ['key.rotated'] }, { signal: abort.signal })) {
        seen.push(event);
        if (seen.length === 2) abort.abort();
      }
    })();
    // Give the stream its first poll, so both events come after it opened.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const rotated = await fetch(`${t.baseUrl}/admin/v1/signing-keys/rotate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}` },
    });
    expect(rotated.status).toBe(200);
    // The CLI writes through connections of its own, as another replica would.
    const cli = await runInProcess(['keys', 'rotate', '--json'], {
      env: envFor(t.database.url, { IDGATE_SECRET: TEST_SECRET }),
    });
    expect(cli.code, cli.stderr).toBe(0);
    await following;
    expect(seen.map((e) => [e.type, e.actor.kind])).toEqual([
      ['key.rotated', 'api-key'],
      ['key.rotated', 'cli'],
    ]);
  }, 20_000);

  it('writes committed events to the JSON-lines file (0600), and nothing for a change that rolled back', async () => {
    await expect(
      t.server.services.storage.transaction(async (tx) => {
        await recordAuditEvent(
          tx,
          { type: 'sign-out', actor, subject: 'rolled-back', details: { grantsRevoked: 0 } },
          clock,
        );
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    const stored = await t.server.services.storage.auditEvents.list({ limit: 1000 });
    expect(stored.some((e) => e.subject === 'rolled-back')).toBe(false);
    // The server's own events (in its process) are in the file, exactly as stored.
    const inFile = fileEvents();
    expect(inFile.some((e) => e.subject === 'rolled-back')).toBe(false);
    const ids = new Set(inFile.map((e) => e.id));
    const mine = stored.filter((e) => ids.has(e.id));
    expect(inFile).toEqual(mine);
    expect(
      mine.filter((e) => e.type === 'admin.changed' && e.actor.kind === 'api-key' && e.subject === userId),
    ).toHaveLength(3);
    expect(mine.filter((e) => e.type === 'refresh.reuse-detected')).toHaveLength(1);
    expect(statSync(logFile).mode & 0o777).toBe(0o600);
  });

  it('purges events past their retention in the background job, with the injected clock', async () => {
    const services = t.server.services;
    const job = startPurgeJob(services, 0, { purged() {}, failed() {} }, 86_400);
    await recordAuditEvent(
      services.storage,
      { type: 'sign-out', actor, details: { grantsRevoked: 0 } },
      clock,
    );
    const before = (await services.storage.auditEvents.list({ limit: 1000 })).length;
    expect((await job.run())?.auditEvents).toBe(0);
    clock.advance(2 * 86_400_000);
    expect((await job.run())?.auditEvents).toBe(before);
    expect(await services.storage.auditEvents.list({ limit: 1000 })).toEqual([]);
  });

  it('holds no secret in the table, the JSON-lines file or the log', async () => {
    const text = [
      JSON.stringify(await t.server.services.storage.auditEvents.list({ limit: 1000 })),
      readFileSync(logFile, 'utf8'),
      t.logs.join('\n'),
    ].join('\n');
    for (const secret of secrets) expect(text).not.toContain(secret);
  });
});

describe.each(testDatabaseUrls())('personal data in audit events on $name', (kind) => {
  const origin = { address: '203.0.113.9', userAgent: 'Mozilla/5.0 audit' };
  const change: AuditEventDraft = {
    type: 'admin.changed',
    actor,
    ...origin,
    details: {
      objectKind: 'user',
      objectId: 'u1',
      action: 'updated',
      operation: null,
      before: { email: 'old@example.test' },
      after: { email: 'new@example.test', groups: ['a'] },
    },
  };

  for (const policy of ['hash', 'omit'] as const) {
    it(`${policy}: address, user agent and email are switched off before they are stored`, async () => {
      const t = await startTestServer(kind, { audit: { personalData: policy } });
      try {
        await recordAuditEvent(t.server.services.storage, [change, change], t.server.services.clock);
        const [a, b] = await t.server.services.storage.auditEvents.list({ limit: 10 });
        const text = JSON.stringify([a, b]);
        for (const value of [origin.address, origin.userAgent, 'old@example.test', 'new@example.test'])
          expect(text).not.toContain(value);
        if (policy === 'omit') {
          expect(a).toMatchObject({ address: null, userAgent: null, details: { before: { email: null } } });
        } else {
          expect(a?.address).toMatch(/^hmac-sha256:[A-Za-z0-9_-]{43}$/);
          // The same address correlates across events; a different field differs.
          expect(b?.address).toBe(a?.address);
          expect(a?.userAgent).not.toBe(a?.address);
        }
        expect(a).toMatchObject({ details: { after: { groups: ['a'] } } });
      } finally {
        await t.close();
      }
    });
  }
});
