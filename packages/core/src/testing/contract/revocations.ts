import { describe, expect, it } from 'vitest';
import { at } from './records.js';
import type { StorageUnderTest } from './subject.js';

const NOW = at('2026-01-01T12:00:00.000Z');
const entry = (
  kind: 'jti' | 'sid',
  value: string,
  expiresAt: string,
  createdAt = '2026-01-01T11:00:00.000Z',
) => ({
  kind,
  value,
  expiresAt: at(expiresAt),
  createdAt: at(createdAt),
});

export function revocationsContract(subject: StorageUnderTest): void {
  describe('revocations', () => {
    it('reports a live entry as revoked, by kind and value', async () => {
      const storage = subject();
      await storage.revocations.add(entry('jti', 'tok-1', '2026-01-01T13:00:00.000Z'));
      expect(await storage.revocations.isRevoked('jti', 'tok-1', NOW)).toBe(true);
      expect(await storage.revocations.isRevoked('sid', 'tok-1', NOW)).toBe(false);
      expect(await storage.revocations.isRevoked('jti', 'tok-2', NOW)).toBe(false);
    });

    it('does not count entries whose expiresAt is at or before now', async () => {
      const storage = subject();
      await storage.revocations.add(entry('jti', 'past', '2026-01-01T11:59:59.999Z'));
      await storage.revocations.add(entry('jti', 'edge', '2026-01-01T12:00:00.000Z'));
      expect(await storage.revocations.isRevoked('jti', 'past', NOW)).toBe(false);
      expect(await storage.revocations.isRevoked('jti', 'edge', NOW)).toBe(false);
      expect(await storage.revocations.isRevoked('jti', 'edge', at('2026-01-01T11:59:59.999Z'))).toBe(true);
    });

    it('keeps the later expiry when an entry is added again', async () => {
      const storage = subject();
      await storage.revocations.add(
        entry('sid', 'grant-1', '2026-01-01T15:00:00.000Z', '2026-01-01T10:00:00.000Z'),
      );
      await storage.revocations.add(
        entry('sid', 'grant-1', '2026-01-01T13:00:00.000Z', '2026-01-01T10:30:00.000Z'),
      );
      expect(await storage.revocations.listLive(NOW)).toStrictEqual([
        entry('sid', 'grant-1', '2026-01-01T15:00:00.000Z', '2026-01-01T10:00:00.000Z'),
      ]);
      await storage.revocations.add(
        entry('sid', 'grant-1', '2026-01-01T18:00:00.000Z', '2026-01-01T11:30:00.000Z'),
      );
      expect(await storage.revocations.listLive(NOW)).toStrictEqual([
        entry('sid', 'grant-1', '2026-01-01T18:00:00.000Z', '2026-01-01T11:30:00.000Z'),
      ]);
      expect(await storage.revocations.isRevoked('sid', 'grant-1', at('2026-01-01T17:00:00.000Z'))).toBe(
        true,
      );
    });

    it('lists only live entries', async () => {
      const storage = subject();
      await storage.revocations.add(entry('jti', 'a', '2026-01-01T13:00:00.000Z'));
      await storage.revocations.add(entry('sid', 'b', '2026-01-02T00:00:00.000Z'));
      await storage.revocations.add(entry('jti', 'c', '2026-01-01T11:00:00.000Z'));
      await storage.revocations.add(entry('jti', 'd', '2026-01-01T12:00:00.000Z'));
      expect(await storage.revocations.listLive(NOW)).toStrictEqual([
        entry('jti', 'a', '2026-01-01T13:00:00.000Z'),
        entry('sid', 'b', '2026-01-02T00:00:00.000Z'),
      ]);
      expect(await storage.revocations.listLive(at('2026-01-03T00:00:00.000Z'))).toEqual([]);
    });

    it('purges expired entries, counts them and keeps live ones', async () => {
      const storage = subject();
      await storage.revocations.add(entry('jti', 'live', '2026-01-01T12:00:00.001Z'));
      await storage.revocations.add(entry('jti', 'edge', '2026-01-01T12:00:00.000Z'));
      await storage.revocations.add(entry('sid', 'old', '2025-12-31T00:00:00.000Z'));
      expect(await storage.revocations.purgeExpired(NOW)).toBe(2);
      expect(await storage.revocations.purgeExpired(NOW)).toBe(0);
      expect((await storage.revocations.listLive(at('2000-01-01T00:00:00Z'))).map((e) => e.value)).toEqual([
        'live',
      ]);
      expect(await storage.revocations.isRevoked('jti', 'live', NOW)).toBe(true);
    });

    it('lists live entries by kind, then value compared byte-wise', async () => {
      const storage = subject();
      for (const [kind, value] of [
        ['sid', 'b'],
        ['jti', 'a'],
        ['jti', 'Z'],
      ] as const)
        await storage.revocations.add(entry(kind, value, '2026-01-01T13:00:00.000Z'));
      expect((await storage.revocations.listLive(NOW)).map((e) => `${e.kind}:${e.value}`)).toEqual([
        'jti:Z',
        'jti:a',
        'sid:b',
      ]);
    });
  });
}
