import { describe, expect, it } from 'vitest';
import type { FactorRecord } from '../../model.js';
import { at } from './records.js';
import type { StorageUnderTest } from './subject.js';

export function factorsContract(subject: StorageUnderTest): void {
  describe('second factors and recovery codes', () => {
    const factor = (id: string, name: string, userId = 'u-alice'): FactorRecord => ({
      id,
      userId,
      kind: 'totp',
      name,
      sealedSecret: `v1.sealed-${id}`,
      lastUsedStep: null,
      credentialId: null,
      transports: null,
      createdAt: at(`2026-01-01T00:00:0${id.slice(-1)}.000Z`),
      confirmedAt: null,
      lastUsedAt: null,
    });

    it("creates factors, lists one user's oldest first, and refuses a name the user has", async () => {
      const { factors } = subject();
      expect(await factors.create(factor('f-2', 'laptop'))).toStrictEqual(factor('f-2', 'laptop'));
      await factors.create(factor('f-1', 'phone'));
      await factors.create(factor('f-3', 'phone', 'u-bob'));
      expect((await factors.list('u-alice')).map((f) => f.id)).toEqual(['f-1', 'f-2']);
      expect(await factors.findById('u-alice', 'f-1')).toStrictEqual(factor('f-1', 'phone'));
      expect(await factors.findById('u-bob', 'f-1')).toBeUndefined();
      await expect(factors.create(factor('f-4', 'phone'))).rejects.toMatchObject({ field: 'name' });
    });

    it('confirms once, then accepts each time step once and only moving forward', async () => {
      const { factors } = subject();
      await factors.create(factor('f-1', 'phone'));
      expect(await factors.useStep('u-alice', 'f-1', 5, at('2026-01-01T00:01:00.000Z'))).toBe(false);
      expect(await factors.confirm('u-bob', 'f-1', 10, at('2026-01-01T00:01:00.000Z'))).toBe(false);
      expect(await factors.confirm('u-alice', 'f-1', 10, at('2026-01-01T00:01:00.000Z'))).toBe(true);
      expect(await factors.confirm('u-alice', 'f-1', 11, at('2026-01-01T00:01:00.000Z'))).toBe(false);
      expect(await factors.useStep('u-alice', 'f-1', 10, at('2026-01-01T00:02:00.000Z'))).toBe(false);
      expect(await factors.useStep('u-alice', 'f-1', 9, at('2026-01-01T00:02:00.000Z'))).toBe(false);
      expect(await factors.useStep('u-alice', 'f-1', 11, at('2026-01-01T00:02:00.000Z'))).toBe(true);
      expect(await factors.findById('u-alice', 'f-1')).toMatchObject({
        lastUsedStep: 11,
        confirmedAt: at('2026-01-01T00:01:00.000Z'),
        lastUsedAt: at('2026-01-01T00:02:00.000Z'),
      });
    });

    it("removes one factor of its user only, or all of a user's factors and codes", async () => {
      const { factors } = subject();
      await factors.create(factor('f-1', 'phone'));
      await factors.create(factor('f-2', 'laptop'));
      await factors.create(factor('f-3', 'phone', 'u-bob'));
      await factors.replaceRecoveryCodes('u-alice', ['h1', 'h2'], at('2026-01-01T00:00:00.000Z'));
      expect(await factors.remove('u-bob', 'f-1')).toBe(false);
      expect(await factors.remove('u-alice', 'f-1')).toBe(true);
      expect(await factors.removeAll('u-alice')).toBe(1);
      expect(await factors.list('u-alice')).toEqual([]);
      expect(await factors.recoveryCodesLeft('u-alice')).toBe(0);
      expect((await factors.list('u-bob')).map((f) => f.id)).toEqual(['f-3']);
    });

    it('uses each recovery code once, and a new set replaces the old one', async () => {
      const { factors } = subject();
      await factors.replaceRecoveryCodes('u-alice', ['h1', 'h2', 'h3'], at('2026-01-01T00:00:00.000Z'));
      await factors.replaceRecoveryCodes('u-bob', ['h1'], at('2026-01-01T00:00:00.000Z'));
      expect(await factors.useRecoveryCode('u-alice', 'h1', at('2026-01-01T00:01:00.000Z'))).toBe(true);
      expect(await factors.useRecoveryCode('u-alice', 'h1', at('2026-01-01T00:02:00.000Z'))).toBe(false);
      expect(await factors.useRecoveryCode('u-alice', 'nope', at('2026-01-01T00:02:00.000Z'))).toBe(false);
      expect(await factors.recoveryCodesLeft('u-alice')).toBe(2);
      expect(await factors.recoveryCodesLeft('u-bob')).toBe(1);
      await factors.replaceRecoveryCodes('u-alice', ['h4'], at('2026-01-01T00:03:00.000Z'));
      expect(await factors.useRecoveryCode('u-alice', 'h2', at('2026-01-01T00:04:00.000Z'))).toBe(false);
      expect(await factors.recoveryCodesLeft('u-alice')).toBe(1);
    });

    it('records whether a second factor is required of a user', async () => {
      const { factors } = subject();
      expect(await factors.isRequired('u-alice')).toBe(false);
      await factors.setRequired('u-alice', true, at('2026-01-01T00:00:00.000Z'));
      await factors.setRequired('u-alice', true, at('2026-01-01T00:00:01.000Z'));
      expect(await factors.isRequired('u-alice')).toBe(true);
      expect(await factors.isRequired('u-bob')).toBe(false);
      await factors.setRequired('u-alice', false, at('2026-01-01T00:00:02.000Z'));
      expect(await factors.isRequired('u-alice')).toBe(false);
    });

    it('stores WebAuthn credentials: found by credential id, counter moved by compare-and-set', async () => {
      const { factors } = subject();
      const passkey: FactorRecord = {
        ...factor('f-5', 'laptop passkey'),
        kind: 'webauthn',
        sealedSecret: 'cose-public-key',
        lastUsedStep: 0,
        credentialId: 'cred-1',
        transports: ['internal', 'hybrid'],
        confirmedAt: at('2026-01-01T00:00:05.000Z'),
      };
      expect(await factors.create(passkey)).toStrictEqual(passkey);
      expect(await factors.findByCredentialId('cred-1')).toStrictEqual(passkey);
      expect(await factors.findByCredentialId('cred-2')).toBeUndefined();
      await expect(
        factors.create({ ...passkey, id: 'f-6', name: 'other', userId: 'u-bob' }),
      ).rejects.toMatchObject({ field: 'credentialId' });
      const used = at('2026-01-01T00:05:00.000Z');
      expect(await factors.useSignCount('u-bob', 'f-5', 0, 1, used)).toBe(false);
      expect(await factors.useSignCount('u-alice', 'f-5', 3, 4, used)).toBe(false);
      expect(await factors.useSignCount('u-alice', 'f-5', 0, 7, used)).toBe(true);
      expect(await factors.useSignCount('u-alice', 'f-5', 0, 8, used)).toBe(false);
      expect(await factors.findById('u-alice', 'f-5')).toMatchObject({ lastUsedStep: 7, lastUsedAt: used });
      expect(await factors.remove('u-alice', 'f-5')).toBe(true);
      expect(await factors.findByCredentialId('cred-1')).toBeUndefined();
    });

    it('takes a WebAuthn challenge once, and drops expired ones when storing new ones', async () => {
      const { factors } = subject();
      const challenge = (id: string, expiresAt: string) => ({
        id,
        purpose: 'authenticate' as const,
        interactionId: 'i-1',
        userId: null,
        createdAt: at('2026-01-01T00:00:00.000Z'),
        expiresAt: at(expiresAt),
      });
      await factors.saveChallenge(
        challenge('c-1', '2026-01-01T00:05:00.000Z'),
        at('2026-01-01T00:00:00.000Z'),
      );
      await factors.saveChallenge(
        { ...challenge('c-2', '2026-01-01T00:05:00.000Z'), purpose: 'register', userId: 'u-alice' },
        at('2026-01-01T00:00:00.000Z'),
      );
      expect(await factors.takeChallenge('c-2')).toStrictEqual({
        ...challenge('c-2', '2026-01-01T00:05:00.000Z'),
        purpose: 'register',
        userId: 'u-alice',
      });
      expect(await factors.takeChallenge('c-2')).toBeUndefined();
      await factors.saveChallenge(
        challenge('c-3', '2026-01-01T00:15:00.000Z'),
        at('2026-01-01T00:10:00.000Z'),
      );
      expect(await factors.takeChallenge('c-1')).toBeUndefined();
      expect(await factors.takeChallenge('c-3')).toMatchObject({ id: 'c-3' });
    });
  });
}
