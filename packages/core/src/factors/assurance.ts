/**
 * Authentication context class references idgate asserts in `acr` (OIDC Core §2): a sign-in
 * with a second factor, and one with a single factor (a password, or an upstream provider).
 */
export const ACR = {
  mfa: 'urn:idgate:acr:mfa',
  singleFactor: 'urn:idgate:acr:sf',
} as const;

/** Every `acr` idgate may assert, strongest first: discovery's `acr_values_supported`. */
export const ACR_VALUES_SUPPORTED: readonly string[] = [ACR.mfa, ACR.singleFactor];

/**
 * RFC 8176 authentication method references: `pwd` a password, `otp` a one-time password (a TOTP
 * code, and a recovery code, which is a one-time password too), `hwk` a hardware-bound key (a
 * WebAuthn passkey or security key), `user` the authenticator verified its user (a WebAuthn
 * assertion with the UV flag: a PIN or a biometric, the authenticator does not say which), `mfa`
 * more than one factor; and
 * idgate's own `fed`, a sign-in at an upstream identity provider (RFC 8176 §2 allows more values).
 */
export type AuthenticationMethod = 'pwd' | 'fed' | 'otp' | 'hwk' | 'user' | 'mfa';

/**
 * The `amr` of a sign-in: its methods, plus `mfa` when there were two factors.
 * @example amrOf(['pwd', 'otp']) // ['pwd', 'otp', 'mfa']
 */
export function amrOf(methods: readonly AuthenticationMethod[]): string[] {
  const distinct = [...new Set(methods.filter((m) => m !== 'mfa'))];
  return distinct.length > 1 ? [...distinct, 'mfa'] : distinct;
}

/**
 * The `acr` a sign-in with `amr` reaches.
 * @example acrOf(['pwd']) // 'urn:idgate:acr:sf'
 */
export function acrOf(amr: readonly string[] | null | undefined): string {
  return amr?.includes('mfa') === true ? ACR.mfa : ACR.singleFactor;
}

/**
 * Whether an authorization request's `acr_values` (space separated, in order of preference)
 * asks for a second factor: it names the MFA acr and no weaker one idgate knows.
 * @example wantsMfa('urn:idgate:acr:mfa') // true
 */
export function wantsMfa(acrValues: readonly string[] | undefined): boolean {
  if (acrValues === undefined || acrValues.length === 0) return false;
  return acrValues.includes(ACR.mfa) && !acrValues.includes(ACR.singleFactor);
}
