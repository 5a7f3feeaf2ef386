import type { JWK, JWTPayload } from 'jose';
import { fromBase64url, isBase64url, utf8 } from '../internal/encoding.js';
import type { JwsCrypto, JwsVerifyFunction } from '../keys/jws-crypto.js';
import type { DecodedSubjectToken, TrustRule } from './evaluate.js';

/**
 * The algorithms verified through a {@link JwsCrypto}: those of GitHub Actions, GitLab CI and
 * Kubernetes service-account tokens. The rest (and EdDSA, whose Ed448 keys a `JwsCrypto` lacks)
 * go through jose.
 */
type PortAlgorithm = 'RS256' | 'ES256';
const PORT_ALGORITHMS: ReadonlySet<string> = new Set<PortAlgorithm>(['RS256', 'ES256']);

/** The key type and curve each of them needs (RFC 7518 §6). */
const KEY_OF: Record<PortAlgorithm, { kty: string; crv?: string }> = {
  RS256: { kty: 'RSA' },
  ES256: { kty: 'EC', crv: 'P-256' },
};

/** What {@link verifySubjectJws} answers: the verified claims, or the rule and its wording. */
export type SubjectVerification =
  | { ok: true; payload: JWTPayload }
  | { ok: false; rule: TrustRule; reason: string };

/** The checks of a subject token beside its signature: jose's `jwtVerify` options, as evaluate.ts passes them. */
export interface SubjectClaimsPolicy {
  issuer: string;
  audience: string;
  /** Seconds since the epoch. */
  now: number;
}

const MALFORMED: SubjectVerification = {
  ok: false,
  rule: 'malformed',
  reason: 'subject_token is not a valid JWT',
};

// Verify functions by primitives, then key and algorithm: making one costs more than verifying with it.
const verifiersOf = new WeakMap<JwsCrypto, Map<string, Promise<JwsVerifyFunction>>>();

/**
 * Whether {@link verifySubjectJws} verifies a token with this protected header; otherwise jose
 * does (other algorithms, and headers with `crit` or `b64`, which jose refuses or understands).
 */
export function portVerifies(header: Readonly<Record<string, unknown>>): boolean {
  return (
    typeof header.alg === 'string' &&
    PORT_ALGORITHMS.has(header.alg) &&
    !('crit' in header) &&
    !('b64' in header)
  );
}

/**
 * Verifies a compact JWS subject token with `jws` (a server's native primitives) and checks its
 * claims as jose's `jwtVerify` does with the options evaluate.ts gives it (the key chosen from
 * `keys` as jose's local JWK set chooses it; `exp`, `sub`, `jti` required; `iss`, `aud` matched;
 * `exp`, `nbf` and `iat` numbers, without leeway), with the same refusals. Only for headers
 * {@link portVerifies} accepts. `decoded` is the token's `decodeSubjectToken` (decoded once per
 * request): the claims checked are those of the very bytes whose signature verifies.
 * @example const verified = await verifySubjectJws(token, decodeSubjectToken(token), keys.keys, policy, nodeJws);
 */
export async function verifySubjectJws(
  token: string,
  decoded: DecodedSubjectToken,
  keys: readonly JWK[],
  policy: SubjectClaimsPolicy,
  jws: JwsCrypto,
): Promise<SubjectVerification> {
  const { header } = decoded;
  const alg = header.alg as PortAlgorithm;
  const kid = header.kid;
  const wanted = KEY_OF[alg];
  const candidates = keys.filter(
    (jwk) =>
      jwk.kty === wanted.kty &&
      (typeof kid !== 'string' || jwk.kid === kid) &&
      (typeof jwk.alg !== 'string' || jwk.alg === alg) &&
      (typeof jwk.use !== 'string' || jwk.use === 'sig') &&
      (!Array.isArray(jwk.key_ops) || jwk.key_ops.includes('verify')) &&
      (wanted.crv === undefined || jwk.crv === wanted.crv),
  );
  const [key] = candidates;
  if (key === undefined || candidates.length > 1)
    return {
      ok: false,
      rule: 'unknown_key',
      reason: 'subject_token is signed by a key its issuer does not publish',
    };
  const [protectedHeader = '', body = '', encoded = ''] = token.split('.');
  // The payload was decoded already; unpadded base64url is all that is left to insist on.
  if (!isBase64url(body)) return MALFORMED;
  let signature: Uint8Array;
  try {
    signature = fromBase64url(encoded);
  } catch {
    return MALFORMED;
  }
  let verify: JwsVerifyFunction;
  try {
    verify = await verifierFor(key, alg, jws);
  } catch {
    return { ok: false, rule: 'signature', reason: 'subject_token could not be verified' };
  }
  if (!(await verify(utf8(`${protectedHeader}.${body}`), signature)))
    return { ok: false, rule: 'signature', reason: 'subject_token signature is invalid' };
  return checkClaims(decoded.claims, policy);
}

function verifierFor(key: JWK, alg: PortAlgorithm, jws: JwsCrypto): Promise<JwsVerifyFunction> {
  let verifiers = verifiersOf.get(jws);
  if (verifiers === undefined) {
    verifiers = new Map();
    verifiersOf.set(jws, verifiers);
  }
  const id = `${alg} ${JSON.stringify(key)}`;
  let verifier = verifiers.get(id);
  if (verifier === undefined) {
    // jose refuses RSA keys under 2048 bits (RFC 7518 §3.3); so does this, as the verifier is made.
    verifier =
      alg === 'RS256' && fromBase64url(String(key.n)).length < 256
        ? Promise.reject(new TypeError('RSA key under 2048 bits'))
        : jws.verifier(key as Record<string, unknown>, alg);
    // A key that cannot be imported is not remembered: the next token tries again.
    verifier.catch(() => verifiers.delete(id));
    if (verifiers.size > 256) verifiers.clear();
    verifiers.set(id, verifier);
  }
  return verifier;
}

const missing = (claim: string): SubjectVerification =>
  claim === 'iss'
    ? { ok: false, rule: 'untrusted_issuer', reason: 'subject_token issuer does not match' }
    : claim === 'aud'
      ? { ok: false, rule: 'audience', reason: 'subject_token audience does not match' }
      : { ok: false, rule: 'missing_claim', reason: `subject_token has no valid ${claim} claim` };
const notYetValid: SubjectVerification = {
  ok: false,
  rule: 'not_yet_valid',
  reason: 'subject_token is not valid yet',
};

// In jose's order: presence (iss, aud, then the required claims backwards), iss, aud, then the
// numeric dates iat, nbf, exp.
function checkClaims(payload: JWTPayload, policy: SubjectClaimsPolicy): SubjectVerification {
  for (const claim of ['iss', 'aud', 'jti', 'sub', 'exp'])
    if (!Object.hasOwn(payload, claim)) return missing(claim);
  if (payload.iss !== policy.issuer) return missing('iss');
  const aud = payload.aud;
  if (
    !(typeof aud === 'string' ? aud === policy.audience : Array.isArray(aud) && aud.includes(policy.audience))
  )
    return missing('aud');
  if (payload.iat !== undefined && typeof payload.iat !== 'number') return notYetValid;
  if (payload.nbf !== undefined && (typeof payload.nbf !== 'number' || payload.nbf > policy.now))
    return notYetValid;
  if (typeof payload.exp !== 'number') return missing('exp');
  if (payload.exp <= policy.now) return { ok: false, rule: 'expired', reason: 'subject_token has expired' };
  return { ok: true, payload };
}
