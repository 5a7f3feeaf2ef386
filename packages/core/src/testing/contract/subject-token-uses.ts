import { describe, expect, it } from 'vitest';
import { at } from './records.js';
import type { StorageUnderTest } from './subject.js';

const NOW = at('2026-01-01T12:00:00.000Z');
const use = (jti: string, expiresAt = '2026-01-01T12:10:00.000Z', issuer = 'https://ci.example') => ({
  issuer,
  jti,
  expiresAt: at(expiresAt),
});

export function subjectTokenUsesContract(subject: StorageUnderTest): void {
  describe('subject token uses (a token exchange spends each jti once)', () => {
    it('spends a jti once per issuer, and never again while it lives', async () => {
      const storage = subject();
      const { subjectTokenUses } = storage;
      expect(await subjectTokenUses.spend(use('a'), NOW)).toBe(true);
      expect(await subjectTokenUses.spend(use('a'), NOW)).toBe(false);
      // The same jti from another issuer is another token.
      expect(await subjectTokenUses.spend(use('a', undefined, 'https://other.example'), NOW)).toBe(true);
      expect(await subjectTokenUses.spend(use('a'), at('2026-01-01T12:09:59.999Z'))).toBe(false);
      expect(await subjectTokenUses.spend(use('b'), NOW)).toBe(true);
    });

    it('takes a jti again once its earlier use has expired, then holds it until the new expiry', async () => {
      const storage = subject();
      const { subjectTokenUses } = storage;
      expect(await subjectTokenUses.spend(use('e', '2026-01-01T12:05:00.000Z'), NOW)).toBe(true);
      const later = at('2026-01-01T12:05:00.000Z');
      expect(await subjectTokenUses.spend(use('e', '2026-01-01T12:30:00.000Z'), later)).toBe(true);
      expect(await subjectTokenUses.spend(use('e', '2026-01-01T12:30:00.000Z'), later)).toBe(false);
      expect(
        await subjectTokenUses.spend(use('e', '2026-01-01T12:30:00.000Z'), at('2026-01-01T12:29:59.999Z')),
      ).toBe(false);
      expect(await subjectTokenUses.purgeExpired(at('2026-01-01T12:29:59.999Z'))).toBe(0);
      expect(await subjectTokenUses.purgeExpired(at('2026-01-01T12:30:00.000Z'))).toBe(1);
      expect(await subjectTokenUses.spend(use('e', '2026-01-01T13:00:00.000Z'), later)).toBe(true);
    });
  });
}
