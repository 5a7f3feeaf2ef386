import { describe, expect, it } from 'vitest';
import { listAuditEvents } from '../../src/admin/audit-events.js';
import { auditEventTime, followAuditEvents } from '../../src/audit/follow.js';
import { type AuditEventDraft, recordAuditEvent } from '../../src/audit/record.js';
import { purgeAuditEvents } from '../../src/maintenance/purge.js';
import { createMemoryStorage } from '../../src/testing.js';
import { manualClock } from '../helpers.js';

const T0 = Date.parse('2026-01-01T10:00:00.000Z');
const signOut = (subject: string): AuditEventDraft => ({
  type: 'sign-out',
  actor: { kind: 'user', id: subject },
  subject,
  details: { grantsRevoked: 0 },
});

describe('followAuditEvents', () => {
  it('gives each event once, also one committed late behind the newest seen, and resumes after an id', async () => {
    const storage = createMemoryStorage();
    const abort = new AbortController();
    const polls: Array<() => Promise<void>> = [
      // Between polls: a new event, then one with an earlier time that commits later.
      async () => void (await recordAuditEvent(storage, signOut('b'), manualClock(T0 + 5000))),
      async () => void (await recordAuditEvent(storage, signOut('late'), manualClock(T0 + 3000))),
      async () => abort.abort(),
    ];
    await recordAuditEvent(storage, signOut('before'), manualClock(T0 - 1));
    await recordAuditEvent(storage, signOut('a'), manualClock(T0 + 1000));
    const seen: string[] = [];
    for await (const event of followAuditEvents(
      storage.auditEvents,
      {},
      {
        signal: abort.signal,
        intervalMs: 1,
        windowMs: 10_000,
        fromMs: T0,
        wait: async () => polls.shift()?.(),
      },
    ))
      seen.push(event.subject ?? '');
    expect(seen).toEqual(['a', 'b', 'late']);

    const [a] = (await listAuditEvents({ storage }, { user: 'a' })).items;
    expect(auditEventTime(a?.id ?? '')).toBe(T0 + 1000);
    const resumed = new AbortController();
    const again: string[] = [];
    for await (const event of followAuditEvents(
      storage.auditEvents,
      {},
      {
        signal: resumed.signal,
        intervalMs: 1,
        windowMs: 10_000,
        fromMs: 0,
        afterId: a?.id,
        wait: async () => resumed.abort(),
      },
    ))
      again.push(event.subject ?? '');
    expect(again).toEqual(['late', 'b']);
  });
});

describe('listAuditEvents and purgeAuditEvents', () => {
  it('refuses a bad filter naming it, and purges in batches', async () => {
    const storage = createMemoryStorage();
    await expect(listAuditEvents({ storage }, { type: 'nope' })).rejects.toThrow(/^type/);
    for (let i = 0; i < 5; i++) await recordAuditEvent(storage, signOut(`u${i}`), manualClock(T0 + i));
    expect(await purgeAuditEvents(storage, new Date(T0 + 3), 2)).toBe(3);
    expect((await listAuditEvents({ storage }, {})).items.map((e) => e.subject)).toEqual(['u3', 'u4']);
  });
});
