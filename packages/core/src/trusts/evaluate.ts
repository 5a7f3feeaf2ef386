import { parse as parseCel } from '@marcbachmann/cel-js';
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  type JWK,
  type JWTPayload,
  jwtVerify,
} from 'jose';
import type { JwsCrypto } from '../keys/jws-crypto.js';
import type { TrustRecord } from '../model.js';
import type { Clock } from '../ports/runtime.js';
import type { TrustKeySource } from './keys.js';
import { portVerifies, type SubjectVerification, verifySubjectJws } from './verify-subject.js';

/**
 * The algorithms a subject token may be signed with: asymmetric only. `none` and the HMAC ones are
 * refused whatever the key set holds (RFC 8725 §3.1: an HS256 token "signed" with a public key
 * taken as a shared secret never verifies).
 */
export const SUBJECT_TOKEN_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;

/** The rule a subject token failed, each with the OAuth error the token endpoint answers. */
export type TrustRule =
  | 'malformed'
  | 'algorithm'
  | 'untrusted_issuer'
  | 'audience'
  | 'jwks_unreachable'
  | 'unknown_key'
  | 'signature'
  | 'expired'
  | 'not_yet_valid'
  | 'missing_claim'
  | 'condition'
  | 'username'
  | 'cluster'
  | 'lifetime'
  | 'replayed';

/** The OAuth error (RFC 6749 §5.2, RFC 8693 §2.2.2) of each {@link TrustRule}. */
export const TRUST_RULE_ERRORS: Readonly<
  Record<TrustRule, 'invalid_grant' | 'invalid_target' | 'invalid_request' | 'temporarily_unavailable'>
> = {
  malformed: 'invalid_request',
  algorithm: 'invalid_grant',
  untrusted_issuer: 'invalid_grant',
  audience: 'invalid_grant',
  jwks_unreachable: 'temporarily_unavailable',
  unknown_key: 'invalid_grant',
  signature: 'invalid_grant',
  expired: 'invalid_grant',
  not_yet_valid: 'invalid_grant',
  missing_claim: 'invalid_grant',
  condition: 'invalid_grant',
  username: 'invalid_grant',
  cluster: 'invalid_target',
  lifetime: 'invalid_request',
  replayed: 'invalid_grant',
};

/** The claims of a subject token that name a CI run, as the audit trail keeps them. */
export const RUN_CLAIMS: Readonly<Record<string, string>> = {
  repository: 'repository',
  ref: 'ref',
  workflow: 'workflow',
  workflow_ref: 'workflow',
  run_id: 'runId',
  project_path: 'repository',
  pipeline_id: 'pipeline',
  job_id: 'job',
  'kubernetes.io': 'pod',
};

/**
 * The claims of a subject token that say which CI run (or pod) it is of: GitHub's `repository`,
 * `ref`, `workflow`, `run_id`; GitLab's `project_path`, `ref`, `pipeline_id`, `job_id`; a
 * service account's namespace/pod. Values are cut at 256 characters.
 * @example runClaims({ repository: 'acme/infra', run_id: '42' }) // { repository: 'acme/infra', runId: '42' }
 */
export function runClaims(claims: Readonly<Record<string, unknown>>): Record<string, string> {
  const run: Record<string, string> = {};
  for (const [claim, name] of Object.entries(RUN_CLAIMS)) {
    const value = claims[claim];
    if (claim === 'kubernetes.io') {
      const k8s = value as { namespace?: unknown; pod?: { name?: unknown } } | undefined;
      if (typeof k8s?.namespace === 'string') run.namespace = k8s.namespace.slice(0, 256);
      if (typeof k8s?.pod?.name === 'string') run.pod = k8s.pod.name.slice(0, 256);
      continue;
    }
    if ((typeof value === 'string' || typeof value === 'number') && run[name] === undefined)
      run[name] = String(value).slice(0, 256);
  }
  return run;
}

/** A subject token's protected header and claims, decoded (not verified): what a token exchange reads first. */
export interface DecodedSubjectToken {
  header: ReturnType<typeof decodeProtectedHeader>;
  claims: JWTPayload;
}

/**
 * Decodes a compact JWS subject token once, for its refusal's audit trail and for
 * {@link evaluateSubjectToken}; `undefined` when it is not one (a refusal as `malformed`).
 */
export function decodeSubjectToken(token: string): DecodedSubjectToken | undefined {
  try {
    const header = decodeProtectedHeader(token);
    // decodeJwt also insists on three segments, so a token it decodes splits as verification needs.
    return { header, claims: decodeJwt(token) };
  } catch {
    return undefined;
  }
}

const compiled = new Map<string, ReturnType<typeof parseCel>>();

// Imported key sets by their JSON: importing a key costs more than verifying with it.
const keySets = new Map<string, ReturnType<typeof createLocalJWKSet>>();
function localKeySet(keys: JWK[]): ReturnType<typeof createLocalJWKSet> {
  const id = JSON.stringify(keys);
  let set = keySets.get(id);
  if (set === undefined) {
    set = createLocalJWKSet({ keys });
    if (keySets.size > 256) keySets.clear();
    keySets.set(id, set);
  }
  return set;
}

/**
 * A trust condition compiled once (CEL over `claims`).
 * @throws Error with the CEL parser's message when the expression does not parse.
 */
export function compileCondition(expression: string): ReturnType<typeof parseCel> {
  let program = compiled.get(expression);
  if (program === undefined) {
    program = parseCel(expression);
    if (compiled.size > 1000) compiled.clear();
    compiled.set(expression, program);
  }
  return program;
}

/**
 * The username a trust's template makes of the claims, or the placeholder whose claim is missing
 * (not a string or number, or empty).
 * @example renderUsername('ci:{repository}', { repository: 'acme/infra' }) // { ok: true, username: 'ci:acme/infra' }
 */
export function renderUsername(
  template: string,
  claims: Readonly<Record<string, unknown>>,
): { ok: true; username: string } | { ok: false; claim: string } {
  let missing: string | undefined;
  const username = template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, claim: string) => {
    const value = claims[claim];
    if ((typeof value !== 'string' && typeof value !== 'number') || value === '') {
      missing ??= claim;
      return '';
    }
    return String(value);
  });
  if (missing !== undefined) return { ok: false, claim: missing };
  return { ok: true, username };
}

/** A subject token that a trust accepted: who it speaks for, and for how long at most. */
export interface TrustMatch {
  trust: TrustRecord;
  claims: JWTPayload & { iss: string; sub: string; exp: number };
  username: string;
  groups: string[];
  /** Seconds the issued token may live: the trust's maximum, capped by the subject's remaining life. */
  maxLifetime: number;
}

/** A subject token that no trust accepted: the rule that failed and its wording (never a secret). */
export interface TrustRefusal {
  rule: TrustRule;
  reason: string;
  /** The trust that was tried, when one named the token's issuer. */
  trust?: TrustRecord;
}

/** What {@link evaluateSubjectToken} answers. */
export type TrustDecision = ({ ok: true } & TrustMatch) | ({ ok: false } & TrustRefusal);

const refuse = (rule: TrustRule, reason: string, trust?: TrustRecord): TrustDecision =>
  trust === undefined ? { ok: false, rule, reason } : { ok: false, rule, reason, trust };

/**
 * Evaluates a subject token against the trusts: it must be a JWS signed with an asymmetric
 * algorithm ({@link SUBJECT_TOKEN_ALGORITHMS}); its `iss` must be a trust's issuer; then, for each
 * trust of that issuer in name order, its `aud` must include the trust's audience, its signature
 * verify with the trust's keys (a `kid` not held refetches the set once), `exp` lie ahead and
 * `nbf` (if any) behind at `clock`'s instant, it must carry `sub`, `exp` and `jti`, the condition
 * (CEL over `claims`) be true and the username template fill. The first trust that accepts it
 * wins; when none does, the refusal is the first one tried's. Issues nothing, spends nothing.
 * `decoded` is the token's {@link decodeSubjectToken} when the caller has decoded it already.
 * @example const decision = await evaluateSubjectToken(token, await storage.trusts.list(), { keys, clock });
 */
export async function evaluateSubjectToken(
  token: string,
  trusts: readonly TrustRecord[],
  context: SubjectTokenContext,
  decoded: DecodedSubjectToken | undefined = decodeSubjectToken(token),
): Promise<TrustDecision> {
  if (decoded === undefined) return refuse('malformed', 'subject_token is not a JWT (compact JWS)');
  const { header, claims: unverified } = decoded;
  const alg = header.alg;
  if (typeof alg !== 'string' || !(SUBJECT_TOKEN_ALGORITHMS as readonly string[]).includes(alg))
    return refuse(
      'algorithm',
      `subject_token is signed with ${String(alg).slice(0, 16)}, which is not allowed: ${SUBJECT_TOKEN_ALGORITHMS.join(', ')}`,
    );
  const issuer = unverified.iss;
  const candidates = trusts.filter((trust) => trust.issuer === issuer);
  if (typeof issuer !== 'string' || candidates.length === 0)
    return refuse('untrusted_issuer', 'no trust names the subject_token issuer');
  let first: TrustDecision | undefined;
  for (const trust of candidates) {
    const decision = await evaluateWith(token, decoded, trust, context);
    if (decision.ok) return decision;
    first ??= decision;
  }
  return first as TrustDecision;
}

/** What {@link evaluateSubjectToken} checks a token with. */
export interface SubjectTokenContext {
  keys: TrustKeySource;
  clock: Clock;
  /**
   * Signature primitives for RS256 and ES256 subject tokens (a server's native ones: in Node.js,
   * synchronous `crypto.verify`), with the same checks and refusals as jose's; without, and for
   * other algorithms, jose over Web Crypto.
   */
  jws?: JwsCrypto;
}

async function evaluateWith(
  token: string,
  decoded: DecodedSubjectToken,
  trust: TrustRecord,
  context: SubjectTokenContext,
): Promise<TrustDecision> {
  const { header, claims: unverified } = decoded;
  const kid = header.kid;
  const aud = unverified.aud;
  const audiences = aud === undefined ? [] : Array.isArray(aud) ? aud : [aud];
  if (!audiences.includes(trust.audience))
    return refuse('audience', `subject_token audience does not include ${trust.audience}`, trust);
  let keys = await context.keys.keysFor(trust);
  if (!keys.ok) return refuse('jwks_unreachable', `the keys of ${trust.issuer} could not be fetched`, trust);
  if (kid !== undefined && !keys.keys.some((key) => key.kid === kid) && keys.source !== 'inline') {
    const again = await context.keys.keysFor(trust, { refresh: true });
    if (again.ok) keys = again;
  }
  const verified =
    context.jws !== undefined && portVerifies(header)
      ? await verifySubjectJws(token, decoded, keys.keys, claimsPolicy(trust, context.clock), context.jws)
      : await verifyWithJose(token, keys.keys, trust, context.clock);
  if (!verified.ok) return refuse(verified.rule, verified.reason, trust);
  const claims = verified.payload as TrustMatch['claims'];
  if (trust.condition !== null) {
    let result: unknown;
    try {
      result = compileCondition(trust.condition)({ claims });
    } catch (error) {
      const why = error instanceof Error ? error.message.split('\n')[0] : 'error';
      return refuse(
        'condition',
        `the condition of trust ${trust.name} could not be evaluated: ${why}`,
        trust,
      );
    }
    if (result !== true) return refuse('condition', `the condition of trust ${trust.name} is false`, trust);
  }
  const username = renderUsername(trust.username, claims);
  if (!username.ok)
    return refuse(
      'username',
      `subject_token has no ${username.claim} claim, which the username of trust ${trust.name} needs`,
      trust,
    );
  const remaining = claims.exp - Math.floor(context.clock.now() / 1000);
  return {
    ok: true,
    trust,
    claims,
    username: username.username,
    groups: [...new Set(trust.groups)].sort(),
    maxLifetime: Math.max(1, Math.min(trust.maxTtl, remaining)),
  };
}

const claimsPolicy = (trust: TrustRecord, clock: Clock) => ({
  issuer: trust.issuer,
  audience: trust.audience,
  now: Math.floor(clock.now() / 1000),
});

async function verifyWithJose(
  token: string,
  keys: JWK[],
  trust: TrustRecord,
  clock: Clock,
): Promise<SubjectVerification> {
  try {
    const verified = await jwtVerify(token, localKeySet(keys), {
      algorithms: [...SUBJECT_TOKEN_ALGORITHMS],
      issuer: trust.issuer,
      audience: trust.audience,
      currentDate: new Date(clock.now()),
      requiredClaims: ['exp', 'sub', 'jti'],
    });
    return { ok: true, payload: verified.payload };
  } catch (error) {
    const [rule, reason] = verificationFailure(error);
    return { ok: false, rule, reason };
  }
}

function verificationFailure(error: unknown): [TrustRule, string] {
  if (error instanceof errors.JWTExpired) return ['expired', 'subject_token has expired'];
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf' || error.claim === 'iat')
      return ['not_yet_valid', 'subject_token is not valid yet'];
    if (error.claim === 'aud') return ['audience', 'subject_token audience does not match'];
    if (error.claim === 'iss') return ['untrusted_issuer', 'subject_token issuer does not match'];
    return ['missing_claim', `subject_token has no valid ${error.claim} claim`];
  }
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys)
    return ['unknown_key', 'subject_token is signed by a key its issuer does not publish'];
  if (error instanceof errors.JOSEAlgNotAllowed)
    return ['algorithm', 'subject_token algorithm is not allowed'];
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return ['signature', 'subject_token signature is invalid'];
  if (error instanceof errors.JWTInvalid || error instanceof errors.JWSInvalid)
    return ['malformed', 'subject_token is not a valid JWT'];
  return ['signature', 'subject_token could not be verified'];
}
