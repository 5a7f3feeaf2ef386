import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Clock, recordAuditEvent } from '@idgate/core';
import { AuditChainVerification } from '@idgate/schema';
import { createIdgateAdminClient } from '@idgate/sdk';
import type { Selectable } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HASHED_COLUMNS, linkHash } from '../../src/audit/chain.js';
import { startPurgeJob } from '../../src/maintenance.js';
import type { AuditEventsTable } from '../../src/storage/schema.js';
import { envFor, runInProcess } from '../cli/support.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, TEST_SECRET, type TestServer, testClock } from '../helpers/server.js';
import { adminRequest, tokenEndpoint } from './support.js';

const V1 = 'authentication.k8s.io/v1';
const actor = { kind: 'cli', id: null } as const;
type Row = Selectable<AuditEventsTable>;

/** The parts of an idgate that the chain tests drive: its events made over HTTP, and its database. */
function chainDriver(t: TestServer, adminKey: string) {
  const db = () => t.server.services.database.db;
  const admin = adminRequest(t, adminKey);
  return {
    db,
    /** `POST /admin/v1/events/verify` as a SIEM calls it. */
    async verify(body?: unknown, key = adminKey) {
      const response = await fetch(`${t.baseUrl}/admin/v1/events/verify`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as AuditChainVerification };
    },
    cli: (...args: string[]) =>
      runInProcess(['audit', 'verify', ...args], {
        env: envFor(t.database.url, { IDGATE_SECRET: TEST_SECRET }),
      }),
    /** An admin change of `username` over the API: one `admin.changed` event. */
    async change(username: string, groups: string[]) {
      const response = await admin('PATCH', `users/${username}`, { groups });
      expect(response.status).toBe(200);
    },
    /** The rows of one writer's chain, in order. */
    chain: (writer: string) =>
      db().selectFrom('audit_events').selectAll().where('writer_id', '=', writer).orderBy('seq').execute(),
    /** The writer with the longest chain. */
    async longest(): Promise<string> {
      const rows = await db()
        .selectFrom('audit_events')
        .select((eb) => ['writer_id', eb.fn.countAll().as('n')])
        .where('writer_id', 'is not', null)
        .groupBy('writer_id')
        .execute();
      const best = rows.sort((a, b) => Number(b.n) - Number(a.n))[0];
      if (best?.writer_id === null || best === undefined) throw new Error('no chained events');
      return best.writer_id;
    },
    async restore(row: Row) {
      await db().deleteFrom('audit_events').where('id', '=', row.id).execute();
      await db().insertInto('audit_events').values(row).execute();
    },
  };
}

// Every event is chained to the one its writer stored before it; `idgate audit verify`, the REST
// route and the SDK name the first broken link. Tampering is done as an attacker with database
// access would: SQL straight into the table, behind the running server's back.
describe.each(testDatabaseUrls())('the tamper-evident audit chain on $name', (kind) => {
  let t: TestServer;
  let adminKey: string;
  let drive: ReturnType<typeof chainDriver>;
  const clock = testClock();

  beforeAll(async () => {
    t = await startTestServer(kind, { audit: { tokenReview: 'all', tokenReviewInterval: 3600 } }, { clock });
    adminKey = await t.addApiKey(['admin']);
    drive = chainDriver(t, adminKey);
    await t.addUser('ana', 'correct-horse-chain-51');
    for (const groups of [['a'], ['a', 'b'], ['b'], ['c']]) await drive.change('ana', groups);
    // The group-commit writer (client_credentials) and the background TokenReview writer chain too.
    const client = await t.addClient({ grants: ['client_credentials'], scopes: ['api'] });
    const token = tokenEndpoint(t, client);
    const issued = await Promise.all([1, 2, 3].map(() => token({ grant_type: 'client_credentials' })));
    const reviewKey = await t.addApiKey(['tokenreview']);
    for (const { body } of issued) {
      const response = await fetch(`${t.issuer}/authenticate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${reviewKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: V1, kind: 'TokenReview', spec: { token: body.access_token } }),
      });
      expect(response.status).toBe(200);
    }
    await t.server.context.audit.flush();
  });
  afterAll(async () => t?.close());

  it('verifies an intact trail over REST, the SDK and the CLI (exit 0)', async () => {
    const { status, body } = await drive.verify();
    expect(status).toBe(200);
    const stored = await drive.db().selectFrom('audit_events').select('type').execute();
    expect(stored.map((row) => row.type)).toEqual(
      expect.arrayContaining(['admin.changed', 'token.issued', 'token-review.decided']),
    );
    expect(body).toMatchObject({ intact: true, broken: [], unchained: 0, events: stored.length });
    expect(body.writers.every((w) => w.broken === null && w.anchor === null)).toBe(true);
    expect(body.heads).toHaveLength(body.writers.length);

    const sdk = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: adminKey });
    expect({ ...(await sdk.verifyEvents()), verifiedAt: '' }).toEqual({ ...body, verifiedAt: '' });

    const text = await drive.cli();
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`intact: ${stored.length} events`);
    const json = await drive.cli('--json');
    expect(json.code).toBe(0);
    expect(AuditChainVerification.parse(JSON.parse(json.stdout))).toMatchObject({ intact: true, broken: [] });
    const heads = await drive.cli('--print-head');
    expect(JSON.parse(heads.stdout)).toEqual({ heads: body.heads });
  });

  it('needs audit:read and refuses a bad recorded head with a problem naming it', async () => {
    const auditor = await t.addApiKey(['audit:read']);
    expect((await drive.verify(undefined, auditor)).status).toBe(200);
    const reviewer = await t.addApiKey(['tokenreview']);
    expect((await drive.verify(undefined, reviewer)).status).toBe(403);
    const bad = await drive.verify({ heads: [{ writer: 'w', seq: 1, hash: 'not-a-hash' }] });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('hash');
    const cli = await drive.cli('--heads', '/nonexistent/heads.json');
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain('--heads /nonexistent/heads.json');
  });

  it('names the event whose stored field was edited in the database (altered)', async () => {
    const writer = await drive.longest();
    const rows = await drive.chain(writer);
    const victim = rows[2] as Row;
    await drive
      .db()
      .updateTable('audit_events')
      .set({ address: '198.51.100.66' })
      .where('id', '=', victim.id)
      .execute();
    const { body } = await drive.verify();
    expect(body.intact).toBe(false);
    expect(body.broken).toEqual([
      expect.objectContaining({ writer, seq: Number(victim.seq), eventId: victim.id, kind: 'altered' }),
    ]);
    const cli = await drive.cli();
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(victim.id);
    expect(cli.stdout).toContain('BROKEN (altered)');
    await drive.restore(victim);
    expect((await drive.verify()).body.intact).toBe(true);
  });

  it('names the event after a deleted one (deleted)', async () => {
    const writer = await drive.longest();
    const rows = await drive.chain(writer);
    const [gone, next] = [rows[1] as Row, rows[2] as Row];
    await drive.db().deleteFrom('audit_events').where('id', '=', gone.id).execute();
    const { body } = await drive.verify();
    expect(body.broken).toEqual([
      expect.objectContaining({ writer, seq: Number(next.seq), eventId: next.id, kind: 'deleted' }),
    ]);
    expect(body.broken[0]?.message).toContain(`seq ${Number(gone.seq)}`);
    const json = await drive.cli('--json');
    expect(json.code).toBe(1);
    expect(AuditChainVerification.parse(JSON.parse(json.stdout)).broken[0]?.eventId).toBe(next.id);
    await drive.db().insertInto('audit_events').values(gone).execute();
    expect((await drive.verify()).body.intact).toBe(true);
  });

  it('names the event that no longer follows the one before: a replaced event, its hash recomputed', async () => {
    const writer = await drive.longest();
    const rows = await drive.chain(writer);
    const [forged, next] = [rows[1] as Row, rows[2] as Row];
    const details = JSON.stringify({ forged: true });
    await drive
      .db()
      .updateTable('audit_events')
      .set({ details, hash: linkHash({ ...forged, details }) })
      .where('id', '=', forged.id)
      .execute();
    const { body } = await drive.verify();
    expect(body.broken).toEqual([
      expect.objectContaining({ writer, seq: Number(next.seq), eventId: next.id, kind: 'inserted' }),
    ]);
    await drive.restore(forged);
    expect((await drive.verify()).body.intact).toBe(true);
  });

  it('catches a truncated or recomputed chain against heads recorded outside idgate', async () => {
    const recorded = await drive.cli('--print-head');
    const file = join(mkdtempSync(join(tmpdir(), 'idgate-heads-')), 'heads.json');
    writeFileSync(file, recorded.stdout);
    const { heads } = JSON.parse(recorded.stdout) as AuditChainVerification;
    await drive.change('ana', ['d']);
    expect((await drive.cli('--heads', file)).code).toBe(0);

    // Deleting the end of a chain leaves a shorter chain that verifies on its own.
    const writer = await drive.longest();
    const head = heads.find((h) => h.writer === writer);
    if (head === undefined) throw new Error('no recorded head for the longest chain');
    const tail = (await drive.chain(writer)).filter((row) => Number(row.seq) >= head.seq);
    await drive
      .db()
      .deleteFrom('audit_events')
      .where('writer_id', '=', writer)
      .where('seq', '>=', head.seq)
      .execute();
    expect((await drive.verify()).body.intact).toBe(true);
    const truncated = await drive.verify({ heads });
    expect(truncated.body.broken).toEqual([
      expect.objectContaining({ writer, seq: head.seq, eventId: null, kind: 'deleted' }),
    ]);
    const cli = await drive.cli('--heads', file);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain('recorded head');
    for (const row of tail) await drive.db().insertInto('audit_events').values(row).execute();

    // Rewriting the recorded head and recomputing every hash after it.
    const chain = await drive.chain(writer);
    let prev = (chain.find((row) => Number(row.seq) === head.seq - 1) as Row).hash as string;
    for (const row of chain.filter((r) => Number(r.seq) >= head.seq)) {
      // The head's outcome turned around (it may be a refusal already: an api-key.denied).
      const flipped = row.outcome === 'failure' ? 'success' : 'failure';
      const forged = { ...row, prev_hash: prev, outcome: row.seq === head.seq ? flipped : row.outcome };
      const hash = linkHash(forged);
      await drive
        .db()
        .updateTable('audit_events')
        .set({ outcome: forged.outcome, prev_hash: prev, hash })
        .where('id', '=', row.id)
        .execute();
      prev = hash;
    }
    expect((await drive.verify()).body.intact).toBe(true);
    const rewritten = await drive.verify({ heads });
    expect(rewritten.body.broken).toEqual([
      expect.objectContaining({ writer, seq: head.seq, kind: 'rewritten' }),
    ]);
    for (const row of chain) await drive.restore(row);
    expect((await drive.verify({ heads })).body.intact).toBe(true);
  });

  it('keeps a rolled-back transaction out of the chain', async () => {
    const { storage } = t.server.services;
    await expect(
      storage.transaction(async (tx) => {
        await recordAuditEvent(tx, { type: 'sign-out', actor, details: { grantsRevoked: 0 } }, clock);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    await drive.change('ana', ['e']);
    expect((await drive.verify()).body).toMatchObject({ intact: true, broken: [] });
  });

  it('reports events stored without a chain (before 0022, or by an older replica) as unchained, not broken', async () => {
    const [template] = await drive.chain(await drive.longest());
    const legacy = {
      ...(template as Row),
      id: '00LEGACY000000000000000000',
      writer_id: null,
      seq: null,
      prev_hash: null,
      hash: null,
    };
    await drive.db().insertInto('audit_events').values(legacy).execute();
    const { body } = await drive.verify();
    expect(body).toMatchObject({ intact: true, unchained: 1 });
    expect((await drive.cli()).stdout).toContain('1 unchained events');
    await drive.db().deleteFrom('audit_events').where('id', '=', legacy.id).execute();
  });

  it('hashes every other column as documented: SHA-256 of the canonical JSON of the row', async () => {
    const rows = await drive.db().selectFrom('audit_events').selectAll().execute();
    const columns = Object.keys(rows[0] as Row).filter((column) => column !== 'hash');
    expect([...HASHED_COLUMNS]).toEqual(columns.sort());
    for (const row of rows) {
      // As an auditor would, from the docs alone: sorted keys, integers as numbers, no spaces.
      const record = row as unknown as Record<string, string | number | null>;
      const canonical = `{${columns
        .map((c) => {
          const value = record[c] ?? null;
          return `${JSON.stringify(c)}:${JSON.stringify(c === 'seq' || c === 'occurred_at' ? Number(value) : value)}`;
        })
        .join(',')}}`;
      expect(createHash('sha256').update(canonical).digest('hex')).toBe(row.hash);
    }
  });

  it('verifies after the retention purge, from the anchor it leaves, and accepts purged recorded heads', async () => {
    const { services } = t.server;
    const { heads } = (await drive.verify()).body;
    const job = startPurgeJob(services, 0, { purged() {}, failed() {} }, 86_400);
    clock.advance(2 * 86_400_000);
    await drive.change('ana', ['young']);
    // Committed after the young event but stamped earlier (a transaction that began before it):
    // the purge must not cut it out of the middle of the chain.
    const earlier: Clock = { now: () => clock.now() - 3 * 86_400_000 };
    await recordAuditEvent(
      services.storage,
      { type: 'sign-out', actor, details: { grantsRevoked: 0 } },
      earlier,
    );
    const before = (await drive.db().selectFrom('audit_events').select('id').execute()).length;
    const purged = (await job.run())?.auditEvents ?? 0;
    expect(purged).toBe(before - 2);
    const { body } = await drive.verify({ heads });
    expect(body).toMatchObject({ intact: true, broken: [], events: 2 });
    const live = body.writers.filter((w) => w.events > 0);
    expect(live).toHaveLength(1);
    expect(live[0]?.anchor).not.toBeNull();
    expect(live[0]?.head?.seq).toBe((live[0]?.anchor?.seq ?? 0) + 2);
    expect((await drive.cli()).code).toBe(0);
    // Once that earlier-stamped event is old too, the rest goes, and the chain goes on from its anchor.
    clock.advance(2 * 86_400_000);
    expect((await job.run())?.auditEvents).toBe(2);
    await drive.change('ana', ['later']);
    expect((await drive.verify({ heads })).body).toMatchObject({ intact: true, events: 1 });
  });
});

const postgres = testDatabaseUrls().find((kind) => kind.name === 'postgres');

// Replicas on one database each write a chain of their own: neither waits on the other's head,
// and both verify.
describe.runIf(postgres !== undefined)('two idgate instances on one PostgreSQL', () => {
  let a: TestServer;
  let b: TestServer;
  let adminKey: string;

  beforeAll(async () => {
    const kind = postgres as NonNullable<typeof postgres>;
    a = await startTestServer(kind);
    b = await startTestServer(kind, { database: { url: a.database.url } });
    adminKey = await a.addApiKey(['admin']);
    await a.addUser('ana', 'correct-horse-chain-52');
    await a.addUser('bo', 'correct-horse-chain-53');
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('chain their events separately, concurrently, and the trail verifies', async () => {
    const [onA, onB] = [chainDriver(a, adminKey), chainDriver(b, adminKey)];
    const changes = Array.from({ length: 12 }, (_, i) =>
      i % 2 === 0 ? onA.change('ana', [`g${i}`]) : onB.change('bo', [`g${i}`]),
    );
    await Promise.all(changes);
    const { body } = await onB.verify();
    expect(body).toMatchObject({ intact: true, broken: [], unchained: 0 });
    const rows = await onA.db().selectFrom('audit_events').select(['writer_id', 'type']).execute();
    expect(body.events).toBe(rows.length);
    const changedBy = new Set(rows.filter((r) => r.type === 'admin.changed').map((r) => r.writer_id));
    // Each server chained its own changes under its own writer id.
    expect(changedBy.size).toBeGreaterThanOrEqual(2);
    for (const writer of changedBy) {
      const chain = await onA.chain(writer as string);
      expect(chain.map((r) => Number(r.seq))).toEqual(chain.map((_, i) => i + 1));
    }
    expect((await onA.cli()).code).toBe(0);
  });
});
