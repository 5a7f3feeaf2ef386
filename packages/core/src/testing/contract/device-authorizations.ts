import { describe, expect, it } from 'vitest';
import type { Storage } from '../../ports/storage.js';
import { StorageConflictError } from '../../ports/storage.js';
import { at, newDevice, newUpstream } from './records.js';
import type { StorageUnderTest } from './subject.js';

const CREATED = at('2026-01-01T10:00:00.000Z');
const LATER = at('2026-01-01T10:01:00.000Z');

export function deviceAuthorizationsContract(subject: StorageUnderTest): void {
  describe('device authorizations', () => {
    it('round-trips a request, found by its device code hash and by its live user code', async () => {
      const storage = subject();
      await storage.deviceAuthorizations.create(newDevice());
      await storage.deviceAuthorizations.create(
        newDevice({ deviceCodeHash: 'dc-hash-2', userCode: 'ZZZZZZZZ', resource: null }),
      );
      expect(await storage.deviceAuthorizations.findByDeviceCodeHash('dc-hash-1')).toStrictEqual(newDevice());
      expect(await storage.deviceAuthorizations.findLiveByUserCode('ZZZZZZZZ', LATER)).toStrictEqual(
        newDevice({ deviceCodeHash: 'dc-hash-2', userCode: 'ZZZZZZZZ', resource: null }),
      );
      expect(await storage.deviceAuthorizations.findByDeviceCodeHash('nope')).toBeUndefined();
      // Expired: no longer found by its user code.
      expect(
        await storage.deviceAuthorizations.findLiveByUserCode('BCDFGHJK', at('2026-01-01T10:10:00.000Z')),
      ).toBeUndefined();
    });

    it('keeps a user code unique among live requests, and lets a new one take it over once expired', async () => {
      const storage = subject();
      await storage.deviceAuthorizations.create(newDevice());
      const clash = storage.deviceAuthorizations.create(
        newDevice({ deviceCodeHash: 'dc-hash-2', createdAt: LATER }),
      );
      await expect(clash).rejects.toBeInstanceOf(StorageConflictError);
      await expect(clash).rejects.toMatchObject({ field: 'userCode' });
      const sameHash = storage.deviceAuthorizations.create(newDevice({ userCode: 'ZZZZZZZZ' }));
      await expect(sameHash).rejects.toMatchObject({ field: 'deviceCodeHash' });

      const afterExpiry = at('2026-01-01T10:10:00.000Z');
      await storage.deviceAuthorizations.create(
        newDevice({
          deviceCodeHash: 'dc-hash-3',
          createdAt: afterExpiry,
          expiresAt: at('2026-01-01T10:20:00.000Z'),
        }),
      );
      expect(await storage.deviceAuthorizations.findByDeviceCodeHash('dc-hash-1')).toBeUndefined();
      expect(
        (await storage.deviceAuthorizations.findLiveByUserCode('BCDFGHJK', afterExpiry))?.deviceCodeHash,
      ).toBe('dc-hash-3');
    });

    describe('RFC 8628 §3.5 polls, one statement each', () => {
      const poll = (storage: Storage, seconds: number, clientId = 'kubectl') =>
        storage.deviceAuthorizations.poll(
          'dc-hash-1',
          clientId,
          new Date(LATER.getTime() + seconds * 1000),
          5,
        );

      it('records each poll of a pending request; one sooner than the interval slows the device down', async () => {
        const storage = subject();
        await storage.deviceAuthorizations.create(newDevice());
        expect(await poll(storage, 0)).toStrictEqual({
          record: newDevice({ lastPolledAt: LATER }),
          slowDown: false,
        });
        // 3 s after a 5 s interval: slow_down, and 10 s from then on.
        expect(await poll(storage, 3)).toMatchObject({
          record: { lastPolledAt: at('2026-01-01T10:01:03.000Z'), interval: 10 },
          slowDown: true,
        });
        expect(await poll(storage, 9)).toMatchObject({ record: { interval: 15 }, slowDown: true });
        expect(await poll(storage, 24)).toMatchObject({
          record: { lastPolledAt: at('2026-01-01T10:01:24.000Z'), interval: 15 },
          slowDown: false,
        });
        expect(await storage.deviceAuthorizations.findByDeviceCodeHash('dc-hash-1')).toMatchObject({
          lastPolledAt: at('2026-01-01T10:01:24.000Z'),
          interval: 15,
        });
      });

      it("does not find, nor touch, another client's request", async () => {
        const storage = subject();
        await storage.deviceAuthorizations.create(newDevice({ lastPolledAt: LATER }));
        expect(await poll(storage, 1, 'someone-else')).toBeUndefined();
        expect(await storage.deviceAuthorizations.findByDeviceCodeHash('dc-hash-1')).toStrictEqual(
          newDevice({ lastPolledAt: LATER }),
        );
        expect(await storage.deviceAuthorizations.poll('nope', 'kubectl', LATER, 5)).toBeUndefined();
      });

      it('answers a decided or expired request as it is, unchanged', async () => {
        const storage = subject();
        const approved = newDevice({
          status: 'approved',
          userId: 'u-alice',
          authTime: CREATED,
          lastPolledAt: LATER,
        });
        await storage.deviceAuthorizations.create(approved);
        expect(await poll(storage, 1)).toStrictEqual({ record: approved, slowDown: false });
        const expired = newDevice({ deviceCodeHash: 'dc-hash-2', userCode: 'ZZZZZZZZ', lastPolledAt: LATER });
        await storage.deviceAuthorizations.create(expired);
        expect(
          await storage.deviceAuthorizations.poll('dc-hash-2', 'kubectl', at('2026-01-01T10:10:00.000Z'), 5),
        ).toStrictEqual({ record: expired, slowDown: false });
      });

      it('lets only one of two simultaneous polls through', async () => {
        const storage = subject();
        await storage.deviceAuthorizations.create(newDevice());
        const polls = await Promise.all([poll(storage, 0), poll(storage, 0)]);
        expect(polls.map((p) => p?.slowDown).sort()).toEqual([false, true]);
        expect(await storage.deviceAuthorizations.findByDeviceCodeHash('dc-hash-1')).toMatchObject({
          interval: 10,
        });
      });
    });

    it('decides a pending request once, never an expired one', async () => {
      const storage = subject();
      await storage.deviceAuthorizations.create(newDevice());
      await storage.deviceAuthorizations.create(
        newDevice({ deviceCodeHash: 'dc-hash-2', userCode: 'ZZZZZZZZ' }),
      );
      const approve = { status: 'approved', userId: 'u-alice', authTime: CREATED, sessionId: 's-1' } as const;
      expect(
        await storage.deviceAuthorizations.decide(
          'dc-hash-1',
          { ...approve, amr: ['pwd', 'otp', 'mfa'] },
          LATER,
        ),
      ).toBe(true);
      expect(
        await storage.deviceAuthorizations.decide('dc-hash-1', { status: 'denied', userId: 'u-bob' }, LATER),
      ).toBe(false);
      expect(await storage.deviceAuthorizations.findByDeviceCodeHash('dc-hash-1')).toStrictEqual(
        newDevice({
          status: 'approved',
          userId: 'u-alice',
          authTime: CREATED,
          sessionId: 's-1',
          amr: ['pwd', 'otp', 'mfa'],
        }),
      );
      expect(
        await storage.deviceAuthorizations.decide('dc-hash-2', approve, at('2026-01-01T10:10:00.000Z')),
      ).toBe(false);
      expect(
        await storage.deviceAuthorizations.decide('dc-hash-2', { status: 'denied', userId: 'u-bob' }, LATER),
      ).toBe(true);
      expect(await storage.deviceAuthorizations.findByDeviceCodeHash('dc-hash-2')).toMatchObject({
        status: 'denied',
        userId: 'u-bob',
        authTime: null,
      });
      expect(await storage.deviceAuthorizations.decide('nope', approve, LATER)).toBe(false);
    });

    it("keeps the approver's upstream identity, and hands it on when consumed", async () => {
      const storage = subject();
      await storage.deviceAuthorizations.create(newDevice());
      const upstream = newUpstream();
      const approve = {
        status: 'approved',
        userId: 'u-alice',
        authTime: CREATED,
        sessionId: 's-1',
        upstream,
      } as const;
      expect(await storage.deviceAuthorizations.decide('dc-hash-1', approve, LATER)).toBe(true);
      const approved = newDevice({
        status: 'approved',
        userId: 'u-alice',
        authTime: CREATED,
        sessionId: 's-1',
        upstream,
      });
      expect(await storage.deviceAuthorizations.findByDeviceCodeHash('dc-hash-1')).toStrictEqual(approved);
      expect(await storage.deviceAuthorizations.consume('dc-hash-1', LATER)).toStrictEqual({
        won: true,
        record: { ...approved, status: 'consumed', consumedAt: LATER },
      });
    });

    it('consumes an approved request exactly once among many concurrent callers, and nothing else', async () => {
      const storage = subject();
      await storage.deviceAuthorizations.create(newDevice());
      expect(await storage.deviceAuthorizations.consume('dc-hash-1', LATER)).toStrictEqual({
        won: false,
        record: newDevice(),
      });
      await storage.deviceAuthorizations.decide(
        'dc-hash-1',
        { status: 'approved', userId: 'u-alice', authTime: CREATED, sessionId: null },
        LATER,
      );
      const instants = Array.from({ length: 10 }, (_, i) => new Date(LATER.getTime() + i));
      const results = await Promise.all(
        instants.map((instant) => storage.deviceAuthorizations.consume('dc-hash-1', instant)),
      );
      expect(results.filter((r) => r?.won)).toHaveLength(1);
      const consumedAt = new Set(results.map((r) => r?.record.consumedAt?.getTime()));
      expect(consumedAt.size).toBe(1);
      expect(results.every((r) => r?.record.status === 'consumed')).toBe(true);
      expect(await storage.deviceAuthorizations.consume('nope', LATER)).toBeUndefined();
    });

    it('purges requests that expired before now', async () => {
      const storage = subject();
      await storage.deviceAuthorizations.create(newDevice());
      await storage.deviceAuthorizations.create(
        newDevice({
          deviceCodeHash: 'live',
          userCode: 'ZZZZZZZZ',
          expiresAt: at('2026-01-01T11:00:00.000Z'),
        }),
      );
      const now = at('2026-01-01T10:10:00.001Z');
      expect(await storage.deviceAuthorizations.purgeExpired(now)).toBe(1);
      expect(await storage.deviceAuthorizations.findByDeviceCodeHash('dc-hash-1')).toBeUndefined();
      expect(await storage.deviceAuthorizations.findByDeviceCodeHash('live')).toBeDefined();
    });
  });
}
