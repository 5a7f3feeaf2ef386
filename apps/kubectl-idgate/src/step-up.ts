/**
 * Step-up: a cluster that requires a second factor (`idgate clusters add prod --require-mfa`) takes
 * tokens whose `acr` is `urn:idgate:acr:mfa` only. The plugin learns it from idgate's refusal of a
 * refresh, remembers it per cluster, and signs in again once with `acr_values`.
 */

/** The `acr` of a sign-in with a second factor. */
export const MFA_ACR = 'urn:idgate:acr:mfa';

/**
 * The `acr` a refused refresh asks a new sign-in for: idgate answers `invalid_grant` whose
 * `error_description` ends with `acr_values=<acr>` (docs/kubernetes/clusters.md, "Requiring a
 * second factor"); undefined for any other refusal.
 * @example stepUpAcr({ error: 'invalid_grant', error_description: '… sign in again … with acr_values=urn:idgate:acr:mfa' }) // 'urn:idgate:acr:mfa'
 */
export function stepUpAcr(answer: {
  error: string;
  error_description?: string | undefined;
}): string | undefined {
  if (answer.error !== 'invalid_grant') return undefined;
  return /(?:^|\s)acr_values=(\S+)$/.exec(answer.error_description ?? '')?.[1];
}

/**
 * The `acr` claim of a JWT access token, read without verifying it: a hint for the plugin, which
 * the API server and idgate check for themselves. Undefined for anything else.
 */
export function tokenAcr(accessToken: string): string | undefined {
  const payload = accessToken.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown;
    if (typeof claims !== 'object' || claims === null) return undefined;
    const acr = (claims as { acr?: unknown }).acr;
    return typeof acr === 'string' && acr !== '' ? acr : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a token of `acr` satisfies a cluster that requires `required` (nothing required: yes). */
export function satisfies(acr: string | undefined, required: string | undefined): boolean {
  return required === undefined || acr === required;
}
