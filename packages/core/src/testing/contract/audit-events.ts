import { describe, expect, it } from 'vitest';
import { type AuditEventDraft, recordAuditEvent } from '../../audit/record.js';
import { StorageConflictError } from '../../ports/storage.js';
import { newUser } from './records.js';
import type { StorageUnderTest } from './subject.js';

const T0 = Date.parse('2026-01-01T10:00:00.000Z');
const clockAt = (ms: number) => ({ now: () => ms });

const failed = (username: string, subject: string | null): AuditEventDraft => ({
  type: 'sign-in.failed',
  actor: { kind: 'user', id: subject, name: username },
  subject,
  clientId: 'cl_web',
  address: '203.0.113.7',
  userAgent: 'Firefox/130',
  requestId: 'req-7f3a',
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  outcome: 'failure',
  details: {
    method: 'password',
    provider: 'password',
    channel: 'browser',
    username,
    reason: 'invalid_credentials',
    groupsDropped: null,
  },
});

export function auditEventsContract(subject: StorageUnderTest): void {
  describe('audit events', () => {
    it('stores an event as it was recorded and reads it back', async () => {
      const storage = subject();
      const [event] = await recordAuditEvent(storage, failed('alice', 'u-alice'), clockAt(T0));
      expect(await storage.auditEvents.list({ limit: 10 })).toEqual([event]);
      const admin: AuditEventDraft = {
        type: 'admin.changed',
        actor: { kind: 'cli', id: null },
        subject: 'u-alice',
        details: {
          objectKind: 'user',
          objectId: 'u-alice',
          action: 'updated',
          operation: null,
          before: { groups: ['a'], disabled: false },
          after: { groups: ['a', 'b'], disabled: true },
        },
      };
      const [changed] = await recordAuditEvent(storage, admin, clockAt(T0 + 5));
      expect((await storage.auditEvents.list({ limit: 10 }))[1]).toEqual(changed);
    });

    it('refuses an id that exists', async () => {
      const storage = subject();
      const [event] = await recordAuditEvent(storage, failed('alice', 'u-alice'), clockAt(T0));
      if (event === undefined) throw new Error('no event');
      await expect(storage.auditEvents.append([event])).rejects.toBeInstanceOf(StorageConflictError);
    });

    it('pages by (occurred_at, id) and filters by user, types and time, as memory does', async () => {
      const storage = subject();
      const first = await recordAuditEvent(
        storage,
        [failed('alice', 'u-alice'), failed('bob', 'u-bob'), failed('nobody', null)],
        clockAt(T0),
      );
      const [reuse] = await recordAuditEvent(
        storage,
        {
          type: 'refresh.reuse-detected',
          actor: { kind: 'client', id: 'cl_web' },
          subject: 'u-alice',
          clientId: 'cl_web',
          outcome: 'failure',
          details: { grantId: 'g1', grantRevoked: true },
        },
        clockAt(T0 + 1000),
      );
      const ids = (events: { id: string }[]) => events.map((e) => e.id);
      expect(ids(await storage.auditEvents.list({ limit: 10 }))).toEqual([...ids(first), reuse?.id]);
      const [a, b, c] = first;
      if (a === undefined || b === undefined || c === undefined || reuse === undefined)
        throw new Error('missing');
      const page2 = await storage.auditEvents.list({
        limit: 2,
        after: { occurredAt: new Date(a.occurredAt), id: a.id },
      });
      expect(ids(page2)).toEqual([b.id, c.id]);
      expect(ids(await storage.auditEvents.list({ limit: 10, userId: 'u-alice' }))).toEqual([a.id, reuse.id]);
      expect(ids(await storage.auditEvents.list({ limit: 10, types: ['refresh.reuse-detected'] }))).toEqual([
        reuse.id,
      ]);
      expect(
        ids(
          await storage.auditEvents.list({ limit: 10, types: ['sign-in.failed', 'refresh.reuse-detected'] }),
        ),
      ).toEqual([a.id, b.id, c.id, reuse.id]);
      const since = new Date(T0 + 1000);
      expect(ids(await storage.auditEvents.list({ limit: 10, since }))).toEqual([reuse.id]);
      expect(ids(await storage.auditEvents.list({ limit: 10, until: since }))).toEqual(ids(first));
      expect(await storage.auditEvents.purgeBefore(since)).toBe(3);
      expect(ids(await storage.auditEvents.list({ limit: 10 }))).toEqual([reuse.id]);
    });

    it('appends many events in one call', async () => {
      const storage = subject();
      const drafts = Array.from({ length: 1200 }, (_, i) => failed(`user${i}`, null));
      await recordAuditEvent(storage, drafts, clockAt(T0));
      expect(await storage.auditEvents.list({ limit: 2000 })).toHaveLength(1200);
    });

    it('leaves no event when the change it records rolls back', async () => {
      const storage = subject();
      const boom = new Error('the change failed after its event was recorded');
      await expect(
        storage.transaction(async (tx) => {
          await tx.users.create(newUser());
          await recordAuditEvent(tx, failed('alice', 'u-alice'), clockAt(T0));
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await storage.users.count()).toBe(0);
      expect(await storage.auditEvents.list({ limit: 10 })).toEqual([]);
      // And both land when it commits.
      await storage.transaction(async (tx) => {
        await tx.users.create(newUser());
        await recordAuditEvent(tx, failed('alice', 'u-alice'), clockAt(T0));
      });
      expect(await storage.auditEvents.list({ limit: 10 })).toHaveLength(1);
    });
  });
}
