import { describe, expect, it } from 'vitest';
import { StorageConflictError } from '../../ports/storage.js';
import { at, newGrant, newUpstream } from './records.js';
import type { StorageUnderTest } from './subject.js';

const REVOKED_AT = at('2026-01-02T00:00:00.000Z');

export function grantsContract(subject: StorageUnderTest): void {
  describe('grants', () => {
    it('creates a grant and reads it back exactly, with or without a session', async () => {
      const storage = subject();
      const grant = newGrant();
      expect(await storage.grants.create(grant)).toStrictEqual(grant);
      expect(await storage.grants.findById('g-1')).toStrictEqual(grant);
      const sessionless = newGrant({ id: 'g-2', sessionId: null, scope: [], amr: ['pwd', 'otp', 'mfa'] });
      await storage.grants.create(sessionless);
      expect(await storage.grants.findById('g-2')).toStrictEqual(sessionless);
      expect(await storage.grants.findById('missing')).toBeUndefined();
    });

    it('keeps the resources a grant covers, in order, and null for a grant that recorded none', async () => {
      const storage = subject();
      const resources = ['kubernetes:prod', 'kubernetes:stage', 'https://api.example/v1'];
      const grant = newGrant({ resources });
      expect(await storage.grants.create(grant)).toStrictEqual(grant);
      expect((await storage.grants.findById('g-1'))?.resources).toStrictEqual(resources);
      expect(
        (await storage.grants.recordUse('g-1', at('2026-01-02T00:00:00.000Z'), null))?.resources,
      ).toStrictEqual(resources);
      await storage.grants.create(newGrant({ id: 'g-2' }));
      expect((await storage.grants.findById('g-2'))?.resources).toBeNull();
    });

    it('keeps the upstream identity of a federated grant and replaces it only by compare-and-set on its check time', async () => {
      const storage = subject();
      const upstream = {
        provider: 'corp',
        subject: 'u-100',
        validatedAt: at('2026-01-01T10:00:00.000Z'),
        checkedAt: at('2026-01-01T10:00:00.000Z'),
        sealedState: 'v1.aXY.c2VhbGVk',
      };
      await storage.grants.create(newGrant({ upstream }));
      expect((await storage.grants.findById('g-1'))?.upstream).toStrictEqual(upstream);

      // A re-check claimed (the upstream not asked yet): the check time moves, the vouching does not.
      const claimed = { ...upstream, checkedAt: at('2026-01-01T10:15:00.000Z') };
      const results = await Promise.all([
        storage.grants.updateUpstream('g-1', claimed, upstream.checkedAt),
        storage.grants.updateUpstream('g-1', claimed, upstream.checkedAt),
      ]);
      expect(results.sort()).toEqual([false, true]);
      expect((await storage.grants.findById('g-1'))?.upstream).toStrictEqual(claimed);
      // The upstream answered: vouched for at the check, its token rotated.
      const answered = { ...claimed, validatedAt: claimed.checkedAt, sealedState: 'v1.aXY.cm90YXRlZA' };
      // Compared on the check time: the old one (still the vouching time) no longer matches.
      expect(await storage.grants.updateUpstream('g-1', answered, upstream.checkedAt)).toBe(false);
      expect(await storage.grants.updateUpstream('g-1', answered, claimed.checkedAt)).toBe(true);
      expect((await storage.grants.findById('g-1'))?.upstream).toStrictEqual(answered);
      // A grant without an upstream is never given one by a re-check.
      await storage.grants.create(newGrant({ id: 'g-2' }));
      expect(await storage.grants.updateUpstream('g-2', claimed, upstream.checkedAt)).toBe(false);
      expect(await storage.grants.updateUpstream('missing', claimed, upstream.checkedAt)).toBe(false);
    });

    it('replaces a rotated upstream state on every grant of the identity holding it, and only there', async () => {
      const storage = subject();
      const upstream = newUpstream();
      await storage.grants.create(newGrant({ upstream }));
      await storage.grants.create(newGrant({ id: 'g-2', upstream }));
      const own = newUpstream({ sealedState: 'v1.aXY.b3du' });
      await storage.grants.create(newGrant({ id: 'g-3', upstream: own }));
      const elsewhere = newUpstream({ subject: 'u-200' });
      await storage.grants.create(newGrant({ id: 'g-4', upstream: elsewhere }));
      const next = 'v1.aXY.bmV4dA';
      expect(await storage.grants.replaceUpstreamState('corp', 'u-100', 'v1.aXY.c2VhbGVk', next)).toBe(2);
      for (const id of ['g-1', 'g-2'])
        expect((await storage.grants.findById(id))?.upstream).toStrictEqual({
          ...upstream,
          sealedState: next,
        });
      expect((await storage.grants.findById('g-3'))?.upstream).toStrictEqual(own);
      expect((await storage.grants.findById('g-4'))?.upstream).toStrictEqual(elsewhere);
    });

    it('rejects a duplicate id with an id conflict', async () => {
      const storage = subject();
      await storage.grants.create(newGrant());
      const attempt = storage.grants.create(newGrant({ userId: 'u-bob' }));
      await expect(attempt).rejects.toBeInstanceOf(StorageConflictError);
      await expect(attempt).rejects.toMatchObject({ field: 'id' });
    });

    it('records a use on a grant that is not revoked, in the statement that reads it', async () => {
      const storage = subject();
      await storage.grants.create(newGrant());
      const used = at('2026-01-05T00:00:00.000Z');
      expect(await storage.grants.recordUse('g-1', used, '2001:db8::1')).toStrictEqual(
        newGrant({ lastUsedAt: used, lastUsedAddress: '2001:db8::1' }),
      );
      expect(await storage.grants.recordUse('missing', used, null)).toBeUndefined();
      await storage.grants.revoke('g-1', REVOKED_AT);
      expect(await storage.grants.recordUse('g-1', at('2026-01-06T00:00:00.000Z'), null)).toBeUndefined();
      expect((await storage.grants.findById('g-1'))?.lastUsedAt).toStrictEqual(used);
    });

    it("pages a user's live grants by (createdAt, id), ids compared byte-wise", async () => {
      const storage = subject();
      const same = at('2026-01-01T10:00:00.000Z');
      // Upper case sorts before lower case byte-wise, unlike most collations.
      for (const id of ['g-b', 'G-c', 'g-a']) await storage.grants.create(newGrant({ id, createdAt: same }));
      await storage.grants.create(newGrant({ id: 'g-0', createdAt: at('2026-01-01T09:00:00.000Z') }));
      await storage.grants.create(newGrant({ id: 'g-revoked', revokedAt: REVOKED_AT }));
      await storage.grants.create(newGrant({ id: 'g-expired', expiresAt: at('2026-01-01T11:00:00.000Z') }));
      await storage.grants.create(newGrant({ id: 'g-bob', userId: 'u-bob' }));
      const now = at('2026-01-02T00:00:00.000Z');
      const ids = async (page: Parameters<typeof storage.grants.listLiveByUser>[2]) =>
        (await storage.grants.listLiveByUser('u-alice', now, page)).map((g) => g.id);
      expect(await ids({ limit: 10 })).toEqual(['g-0', 'G-c', 'g-a', 'g-b']);
      expect(await ids({ limit: 2 })).toEqual(['g-0', 'G-c']);
      expect(await ids({ limit: 2, after: { createdAt: same, id: 'G-c' } })).toEqual(['g-a', 'g-b']);
      expect(await ids({ limit: 2, after: { createdAt: same, id: 'g-b' } })).toEqual([]);
    });

    it('tells, per browser session and client, when the latest grant was made', async () => {
      const storage = subject();
      await storage.grants.create(newGrant({ id: 'g-1' }));
      await storage.grants.create(newGrant({ id: 'g-2', createdAt: at('2026-01-01T11:00:00.000Z') }));
      await storage.grants.create(newGrant({ id: 'g-3', clientId: 'web', revokedAt: REVOKED_AT }));
      await storage.grants.create(newGrant({ id: 'g-4', sessionId: 's-2' }));
      await storage.grants.create(newGrant({ id: 'g-5', sessionId: null }));
      const activity = await storage.grants.sessionActivity(['s-1', 's-9']);
      expect(activity.sort((a, b) => (a.clientId < b.clientId ? -1 : 1))).toEqual([
        { sessionId: 's-1', clientId: 'ci', lastGrantAt: at('2026-01-01T11:00:00.000Z') },
        { sessionId: 's-1', clientId: 'web', lastGrantAt: at('2026-01-01T10:00:00.000Z') },
      ]);
      expect(await storage.grants.sessionActivity([])).toEqual([]);
    });

    it('revokes a live grant once; false when missing or already revoked', async () => {
      const storage = subject();
      await storage.grants.create(newGrant());
      expect(await storage.grants.revoke('g-1', REVOKED_AT)).toBe(true);
      expect(await storage.grants.revoke('g-1', at('2026-01-03T00:00:00.000Z'))).toBe(false);
      expect(await storage.grants.revoke('missing', REVOKED_AT)).toBe(false);
      expect((await storage.grants.findById('g-1'))?.revokedAt).toStrictEqual(REVOKED_AT);
    });

    it("revokes only that session's live grants and returns them", async () => {
      const storage = subject();
      await storage.grants.create(newGrant({ id: 'g-b', createdAt: at('2026-01-01T11:00:00.000Z') }));
      await storage.grants.create(newGrant({ id: 'g-a', createdAt: at('2026-01-01T12:00:00.000Z') }));
      const earlier = at('2026-01-01T13:00:00.000Z');
      await storage.grants.create(newGrant({ id: 'g-old', revokedAt: earlier }));
      await storage.grants.create(newGrant({ id: 'g-other', sessionId: 's-2' }));
      await storage.grants.create(newGrant({ id: 'g-none', sessionId: null }));

      const revoked = await storage.grants.revokeBySession('s-1', REVOKED_AT);
      expect(revoked).toStrictEqual([
        newGrant({ id: 'g-b', createdAt: at('2026-01-01T11:00:00.000Z'), revokedAt: REVOKED_AT }),
        newGrant({ id: 'g-a', createdAt: at('2026-01-01T12:00:00.000Z'), revokedAt: REVOKED_AT }),
      ]);
      expect((await storage.grants.findById('g-old'))?.revokedAt).toStrictEqual(earlier);
      expect((await storage.grants.findById('g-other'))?.revokedAt).toBeNull();
      expect((await storage.grants.findById('g-none'))?.revokedAt).toBeNull();
      expect(await storage.grants.revokeBySession('s-1', REVOKED_AT)).toEqual([]);
      expect(await storage.grants.revokeBySession('s-unknown', REVOKED_AT)).toEqual([]);
    });

    it("revokes every live grant of a user, across sessions, and no one else's", async () => {
      const storage = subject();
      await storage.grants.create(newGrant({ id: 'g-1' }));
      await storage.grants.create(newGrant({ id: 'g-2', sessionId: null, clientId: 'other' }));
      await storage.grants.create(newGrant({ id: 'g-3', revokedAt: at('2026-01-01T13:00:00.000Z') }));
      await storage.grants.create(newGrant({ id: 'g-bob', userId: 'u-bob' }));
      const revoked = await storage.grants.revokeByUser('u-alice', REVOKED_AT);
      expect(revoked.map((g) => [g.id, g.revokedAt])).toEqual([
        ['g-1', REVOKED_AT],
        ['g-2', REVOKED_AT],
      ]);
      expect((await storage.grants.findById('g-bob'))?.revokedAt).toBeNull();
      expect(await storage.grants.revokeByUser('u-alice', REVOKED_AT)).toEqual([]);
    });

    it('reports each grant revoked by concurrent callers exactly once', async () => {
      const storage = subject();
      for (const id of ['g-1', 'g-2', 'g-3']) await storage.grants.create(newGrant({ id }));
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          i % 2 === 0
            ? storage.grants.revokeBySession('s-1', REVOKED_AT)
            : storage.grants.revokeByUser('u-alice', REVOKED_AT),
        ),
      );
      expect(
        results
          .flat()
          .map((g) => g.id)
          .sort(),
      ).toEqual(['g-1', 'g-2', 'g-3']);
    });
  });
}
