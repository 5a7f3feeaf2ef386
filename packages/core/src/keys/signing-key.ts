import type { SigningAlgorithm } from '@idgate/schema';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { SigningKeyRecord } from '../model.js';
import { sealPrivateKey } from './seal.js';

/** Algorithms idgate signs with; RS256 is the default because OIDC Core §15.1 requires it. */
export const SIGNING_ALGORITHMS: readonly SigningAlgorithm[] = ['RS256', 'ES256', 'EdDSA'];

/**
 * Generates a signing key pair for `alg`, names it by its RFC 7638 thumbprint and seals the
 * private half with `secret`, ready to store.
 * @example const record = await generateSigningKey('ES256', secret, new Date());
 */
export async function generateSigningKey(
  alg: SigningAlgorithm,
  secret: string,
  now: Date,
): Promise<SigningKeyRecord> {
  const { publicKey, privateKey } = await generateKeyPair(alg, {
    extractable: true,
    ...(alg === 'RS256' ? { modulusLength: 2048 } : {}),
    ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}),
  });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
  const published: JWK = { ...publicJwk, kid, alg, use: 'sig' };
  const privateJwk: JWK = { ...(await exportJWK(privateKey)), kid, alg };
  return {
    kid,
    alg,
    publicJwk: published as Record<string, unknown>,
    sealedPrivateJwk: await sealPrivateKey(privateJwk, secret, kid),
    createdAt: now,
    retiredAt: null,
    publishedUntil: null,
  };
}

/** Where a key stands in its rotation at a given instant. */
export type SigningKeyState = 'active' | 'retired' | 'expired';

/**
 * The state of a stored key: `active` until retired, then `retired` (still in JWKS) until
 * `publishedUntil`, then `expired`.
 * @example signingKeyState(record, new Date()) // 'active'
 */
export function signingKeyState(key: SigningKeyRecord, now: Date): SigningKeyState {
  if (key.retiredAt === null) return 'active';
  return key.publishedUntil !== null && key.publishedUntil.getTime() > now.getTime() ? 'retired' : 'expired';
}

/**
 * The key that signs at `at` among the keys still signing (`signing`, newest first): the newest one
 * published for `delayMs`. When none has been published that long (a rotation soon after the first
 * start), the oldest keeps signing, so the choice never goes back and forth.
 * @example activeSigningKey(signingNewestFirst, Date.now(), 10_000)?.kid
 */
export function activeSigningKey<K extends Pick<SigningKeyRecord, 'createdAt'>>(
  signing: readonly K[],
  at: number,
  delayMs: number,
): K | undefined {
  return signing.find((key) => key.createdAt.getTime() + delayMs <= at) ?? signing.at(-1);
}

/** What an operator sees of a key: {@link SigningKeyState}, or `next` — published, not signing yet. */
export type SigningKeyPhase = 'next' | 'active' | 'retired' | 'expired';

/**
 * The phase of every key at `now`, as the key ring uses them: the one key that signs is `active`
 * (the newest published for `activationDelaySeconds`; on first start, the only one); a newer key
 * still waiting out the delay is `next` (in JWKS, so every replica and relying party has it before
 * it signs); older keys are `retired` while still published, then `expired`.
 * @example signingKeyPhases(await storage.signingKeys.list(), new Date(), 10).get(kid) // 'next'
 */
export function signingKeyPhases(
  keys: readonly SigningKeyRecord[],
  now: Date,
  activationDelaySeconds = 0,
): Map<string, SigningKeyPhase> {
  const at = now.getTime();
  const delay = activationDelaySeconds * 1000;
  const signing = keys
    .filter((key) => key.retiredAt === null || key.retiredAt.getTime() > at)
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  const active = activeSigningKey(signing, at, delay);
  const phases = new Map<string, SigningKeyPhase>();
  for (const key of keys) {
    if (key.kid === active?.kid) phases.set(key.kid, 'active');
    else if (
      active !== undefined &&
      signing.includes(key) &&
      key.createdAt.getTime() > active.createdAt.getTime()
    )
      phases.set(key.kid, 'next');
    else
      phases.set(
        key.kid,
        key.publishedUntil === null || key.publishedUntil.getTime() > at ? 'retired' : 'expired',
      );
  }
  return phases;
}
