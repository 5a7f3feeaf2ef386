import { describe, expect, it } from 'vitest';
import { type AuditEventDraft, createAuditEventIds, recordAuditEvent } from '../../src/audit/record.js';
import { createMemoryStorage } from '../../src/testing.js';
import { manualClock } from '../helpers.js';

const T0 = Date.parse('2026-01-01T10:00:00.000Z');

const signOut = (subject: string): AuditEventDraft => ({
  type: 'sign-out',
  actor: { kind: 'user', id: subject },
  subject,
  details: { grantsRevoked: 0 },
});

describe('recordAuditEvent', () => {
  it('fills the id, the time and the envelope defaults, and appends through the storage it is given', async () => {
    const storage = createMemoryStorage();
    const [event] = await recordAuditEvent(storage, signOut('u1'), manualClock(T0));
    expect(event).toEqual({
      id: expect.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/),
      type: 'sign-out',
      occurredAt: '2026-01-01T10:00:00.000Z',
      actor: { kind: 'user', id: 'u1' },
      subject: 'u1',
      clientId: null,
      address: null,
      userAgent: null,
      requestId: null,
      traceId: null,
      outcome: 'success',
      details: { grantsRevoked: 0 },
    });
    expect(await storage.auditEvents.list({ limit: 10 })).toEqual([event]);
  });

  it('strips whatever the type does not list, so a stray secret never lands', async () => {
    const storage = createMemoryStorage();
    const draft = {
      ...signOut('u1'),
      password: 'hunter2',
      details: { grantsRevoked: 1, refreshToken: 'rt_secret' },
    } as unknown as AuditEventDraft;
    await recordAuditEvent(storage, draft, manualClock(T0));
    expect(JSON.stringify(await storage.auditEvents.list({ limit: 10 }))).not.toMatch(/hunter2|rt_secret/);
  });

  it('refuses a draft that misses a field of its type', async () => {
    const storage = createMemoryStorage();
    const draft = {
      type: 'sign-out',
      actor: { kind: 'user', id: 'u1' },
      details: {},
    } as unknown as AuditEventDraft;
    await expect(recordAuditEvent(storage, draft, manualClock(T0))).rejects.toThrow();
    expect(await storage.auditEvents.list({ limit: 10 })).toEqual([]);
  });

  it('leaves no event when the transaction that recorded it rolls back', async () => {
    const storage = createMemoryStorage();
    const boom = new Error('the change failed after its event was recorded');
    await expect(
      storage.transaction(async (tx) => {
        await recordAuditEvent(tx, signOut('u1'), manualClock(T0));
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await storage.auditEvents.list({ limit: 10 })).toEqual([]);
  });
});

describe('createAuditEventIds', () => {
  it('sorts by time, and in order of making within one millisecond', () => {
    const auditEventId = createAuditEventIds();
    const ids = [
      auditEventId(T0),
      auditEventId(T0),
      auditEventId(T0),
      auditEventId(T0 + 1),
      auditEventId(T0 + 1),
    ];
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(auditEventId(0).slice(0, 10)).toBe('0000000000');
  });
});

describe('the in-memory audit repository', () => {
  it('pages oldest first by (occurredAt, id) and filters by user, types and time', async () => {
    const storage = createMemoryStorage();
    const clock = manualClock(T0);
    await recordAuditEvent(storage, [signOut('u1'), signOut('u2')], clock);
    clock.advance(1);
    const [late] = await recordAuditEvent(
      storage,
      {
        type: 'consent.granted',
        actor: { kind: 'user', id: 'u1' },
        subject: 'u1',
        details: { scopes: ['openid'] },
      },
      clock,
    );
    const all = await storage.auditEvents.list({ limit: 10 });
    expect(all.map((e) => [e.type, e.subject])).toEqual([
      ['sign-out', 'u1'],
      ['sign-out', 'u2'],
      ['consent.granted', 'u1'],
    ]);
    const [first, second] = all;
    if (first === undefined || second === undefined || late === undefined) throw new Error('missing');
    const after = { occurredAt: new Date(first.occurredAt), id: first.id };
    expect(await storage.auditEvents.list({ limit: 1, after })).toEqual([second]);
    expect((await storage.auditEvents.list({ limit: 10, userId: 'u1' })).map((e) => e.id)).toEqual([
      first.id,
      late.id,
    ]);
    expect(await storage.auditEvents.list({ limit: 10, types: ['consent.granted'] })).toEqual([late]);
    expect(await storage.auditEvents.list({ limit: 10, since: new Date(late.occurredAt) })).toEqual([late]);
    expect(await storage.auditEvents.list({ limit: 10, until: new Date(late.occurredAt) })).toEqual([
      first,
      second,
    ]);
    expect(await storage.auditEvents.purgeBefore(new Date(late.occurredAt))).toBe(2);
    expect(await storage.auditEvents.list({ limit: 10 })).toEqual([late]);
  });
});
