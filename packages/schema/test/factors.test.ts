import { describe, expect, it } from 'vitest';
import { FactorsReset, MfaRequirement, UserFactor, UserFactors } from '../src/index.js';

const at = '2026-01-01T00:00:00.000Z';
const factor = { id: 'f1', kind: 'totp', name: 'phone', createdAt: at, lastUsedAt: null };

describe('second factors of a user', () => {
  it('shows a factor without any secret, and drops fields it does not list', () => {
    expect(UserFactor.parse({ ...factor, secret: 'JBSWY3DPEHPK3PXP' })).toEqual(factor);
    expect(UserFactor.safeParse({ ...factor, kind: 'sms' }).success).toBe(false);
    expect(UserFactor.safeParse({ ...factor, lastUsedAt: 'yesterday' }).success).toBe(false);
  });

  it('lists the factors with the requirement and the recovery codes left', () => {
    const listed = { username: 'alice', mfaRequired: true, recoveryCodesLeft: 9, factors: [factor] };
    expect(UserFactors.parse(listed)).toEqual(listed);
    expect(UserFactors.safeParse({ ...listed, recoveryCodesLeft: 1.5 }).success).toBe(false);
  });

  it('takes a boolean requirement and counts a reset', () => {
    expect(MfaRequirement.parse({ required: false })).toEqual({ required: false });
    expect(MfaRequirement.safeParse({ required: 'yes' }).success).toBe(false);
    expect(FactorsReset.parse({ removed: 2 })).toEqual({ removed: 2 });
  });
});
