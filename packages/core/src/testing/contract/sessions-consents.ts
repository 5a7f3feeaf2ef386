import { describe, expect, it } from 'vitest';
import { StorageConflictError } from '../../ports/storage.js';
import { at, newSession, newUpstream } from './records.js';
import type { StorageUnderTest } from './subject.js';

export function sessionsAndConsentsContract(subject: StorageUnderTest): void {
  describe('browser sessions', () => {
    it('creates a session and finds it by id and by secret hash', async () => {
      const storage = subject();
      const session = newSession({ amr: ['pwd', 'otp', 'mfa'] });
      await storage.sessions.create(session);
      expect(await storage.sessions.findById('s-1')).toStrictEqual(session);
      expect(await storage.sessions.findBySecretHash(session.secretHash)).toStrictEqual(session);
      expect(await storage.sessions.findById('missing')).toBeUndefined();
      expect(await storage.sessions.findBySecretHash('missing')).toBeUndefined();
    });

    it('rejects a duplicate id or secret hash, naming which', async () => {
      const storage = subject();
      await storage.sessions.create(newSession());
      await expect(storage.sessions.create(newSession({ secretHash: 'other' }))).rejects.toMatchObject({
        field: 'id',
      });
      const sameSecret = storage.sessions.create(newSession({ id: 's-2' }));
      await expect(sameSecret).rejects.toBeInstanceOf(StorageConflictError);
      await expect(sameSecret).rejects.toMatchObject({ field: 'secretHash' });
    });

    it('ends a live session once; false when missing or already ended', async () => {
      const storage = subject();
      await storage.sessions.create(newSession());
      const endedAt = at('2026-01-01T12:00:00.000Z');
      expect(await storage.sessions.end('s-1', endedAt)).toBe(true);
      expect(await storage.sessions.end('s-1', at('2026-01-01T13:00:00.000Z'))).toBe(false);
      expect(await storage.sessions.end('missing', endedAt)).toBe(false);
      expect(await storage.sessions.findById('s-1')).toStrictEqual(newSession({ endedAt }));
    });

    it('keeps where and with what the browser signed in', async () => {
      const storage = subject();
      const session = newSession({ sourceAddress: '203.0.113.5', userAgent: 'Mozilla/5.0 (X11)' });
      await storage.sessions.create(session);
      expect(await storage.sessions.findById('s-1')).toStrictEqual(session);
    });

    it('keeps the upstream identity the browser signed in through, its state as sealed', async () => {
      const storage = subject();
      const session = newSession({ upstream: newUpstream() });
      await storage.sessions.create(session);
      expect(await storage.sessions.findById('s-1')).toStrictEqual(session);
      expect(await storage.sessions.findBySecretHash(session.secretHash)).toStrictEqual(session);
      // LDAP keeps no upstream state.
      const ldap = newSession({
        id: 's-2',
        secretHash: 'h-2',
        upstream: newUpstream({ provider: 'corp-ldap', subject: 'uid=alice', sealedState: null }),
      });
      await storage.sessions.create(ldap);
      expect(await storage.sessions.findById('s-2')).toStrictEqual(ldap);
      // The upstream rotated the token of the first sign-in.
      const next = 'v1.aXY.bmV4dA';
      expect(await storage.sessions.replaceUpstreamState('corp', 'u-100', 'v1.aXY.c2VhbGVk', next)).toBe(1);
      expect((await storage.sessions.findById('s-1'))?.upstream).toStrictEqual(
        newUpstream({ sealedState: next }),
      );
      expect(await storage.sessions.findById('s-2')).toStrictEqual(ldap);
    });

    it("pages a user's live sessions and ends them all at once", async () => {
      const storage = subject();
      const same = at('2026-01-01T09:59:00.000Z');
      for (const id of ['s-b', 'S-c', 's-a']) {
        await storage.sessions.create(newSession({ id, secretHash: `h-${id}`, createdAt: same }));
      }
      await storage.sessions.create(newSession({ id: 's-ended', secretHash: 'h-e', endedAt: same }));
      await storage.sessions.create(newSession({ id: 's-expired', secretHash: 'h-x', expiresAt: same }));
      await storage.sessions.create(newSession({ id: 's-bob', secretHash: 'h-b', userId: 'u-bob' }));
      const now = at('2026-01-01T12:00:00.000Z');
      const ids = async (page: Parameters<typeof storage.sessions.listLiveByUser>[2]) =>
        (await storage.sessions.listLiveByUser('u-alice', now, page)).map((s) => s.id);
      expect(await ids({ limit: 100 })).toEqual(['S-c', 's-a', 's-b']);
      expect(await ids({ limit: 1, after: { createdAt: same, id: 'S-c' } })).toEqual(['s-a']);

      expect((await storage.sessions.endByUser('u-alice', now)).sort()).toEqual(['S-c', 's-a', 's-b']);
      expect(await storage.sessions.endByUser('u-alice', now)).toEqual([]);
      expect(await ids({ limit: 100 })).toEqual([]);
      expect((await storage.sessions.findById('s-expired'))?.endedAt).toBeNull();
      expect((await storage.sessions.findById('s-bob'))?.endedAt).toBeNull();
    });
  });

  describe('consents', () => {
    const consent = (
      clientId: string,
      scope: string[],
      grantedAt: string,
      resources: string[] | null = null,
    ) => ({
      userId: 'u-alice',
      clientId,
      scope,
      resources,
      grantedAt: at(grantedAt),
    });

    it('saves a consent and finds it by user and client', async () => {
      const storage = subject();
      await storage.consents.save(consent('ci', ['openid', 'email'], '2026-01-01T10:00:00.000Z'));
      await storage.consents.save(consent('other', [], '2026-01-01T11:00:00.000Z'));
      expect(await storage.consents.find('u-alice', 'ci')).toStrictEqual(
        consent('ci', ['openid', 'email'], '2026-01-01T10:00:00.000Z'),
      );
      expect(await storage.consents.find('u-alice', 'other')).toStrictEqual(
        consent('other', [], '2026-01-01T11:00:00.000Z'),
      );
      expect(await storage.consents.find('u-bob', 'ci')).toBeUndefined();
      expect(await storage.consents.find('u-alice', 'missing')).toBeUndefined();
    });

    it('replaces the consent of the same user to the same client', async () => {
      const storage = subject();
      await storage.consents.save(consent('ci', ['openid', 'email', 'groups'], '2026-01-01T10:00:00.000Z'));
      await storage.consents.save(consent('ci', ['openid'], '2026-01-02T10:00:00.000Z'));
      expect(await storage.consents.find('u-alice', 'ci')).toStrictEqual(
        consent('ci', ['openid'], '2026-01-02T10:00:00.000Z'),
      );
    });

    it('keeps the resources (cluster audiences) consented to, and replaces them with the consent', async () => {
      const storage = subject();
      const resources = ['kubernetes:prod', 'https://api.example/v1'];
      await storage.consents.save(consent('ci', ['openid'], '2026-01-01T10:00:00.000Z', resources));
      expect(await storage.consents.find('u-alice', 'ci')).toStrictEqual(
        consent('ci', ['openid'], '2026-01-01T10:00:00.000Z', resources),
      );
      await storage.consents.save(
        consent('ci', ['openid'], '2026-01-02T10:00:00.000Z', ['kubernetes:stage']),
      );
      expect((await storage.consents.find('u-alice', 'ci'))?.resources).toStrictEqual(['kubernetes:stage']);
      await storage.consents.save(consent('ci', ['openid'], '2026-01-03T10:00:00.000Z'));
      expect((await storage.consents.find('u-alice', 'ci'))?.resources).toBeNull();
    });

    it('survives concurrent saves of the same pair', async () => {
      const storage = subject();
      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          storage.consents.save(consent('ci', [`s${i}`], '2026-01-01T10:00:00.000Z')),
        ),
      );
      expect((await storage.consents.find('u-alice', 'ci'))?.scope).toHaveLength(1);
    });
  });
}
