import type { SigningAlgorithm } from '@idgate/schema';
import type { SigningKeyRecord } from '../model.js';
import type { SigningKeyRepository } from '../ports/storage.js';
import { generateSigningKey } from './signing-key.js';

/** What key management needs to know. */
export interface SigningKeyPolicy {
  alg: SigningAlgorithm;
  /** The secret that seals private keys at rest. */
  secret: string;
  /** The longest lifetime of any token a key signs, in seconds: how long a retired key stays published. */
  maxTokenLifetimeSeconds: number;
  /**
   * Seconds a new key is published before it signs (default 0). Replicas fetch keys from storage;
   * in this window every replica's JWKS (and relying parties' caches) learn the key, so no token
   * signed with it is ever checked against a key set that lacks it.
   */
  activationDelaySeconds?: number;
}

/**
 * Makes sure an active signing key exists (first start), and returns all stored keys.
 * @example const records = await ensureSigningKey(storage.signingKeys, policy, new Date());
 */
export async function ensureSigningKey(
  keys: SigningKeyRepository,
  policy: SigningKeyPolicy,
  now: Date,
): Promise<SigningKeyRecord[]> {
  const existing = await keys.list();
  if (existing.some((key) => key.retiredAt === null)) return existing;
  await keys.insert(await generateSigningKey(policy.alg, policy.secret, now));
  return keys.list();
}

/**
 * Rotates: a new key is published at once and signs once the activation delay has passed; until
 * then the previous key keeps signing. Every previously active key is retired at that moment and
 * stays in JWKS until the last token it may have signed has expired.
 * @example const { created, retired } = await rotateSigningKey(storage.signingKeys, policy, new Date());
 */
export async function rotateSigningKey(
  keys: SigningKeyRepository,
  policy: SigningKeyPolicy,
  now: Date,
): Promise<{ created: SigningKeyRecord; retired: string[] }> {
  const previous = (await keys.list()).filter((key) => key.retiredAt === null);
  const created = await generateSigningKey(policy.alg, policy.secret, now);
  await keys.insert(created);
  const retiresAt = new Date(now.getTime() + (policy.activationDelaySeconds ?? 0) * 1000);
  const publishedUntil = new Date(retiresAt.getTime() + policy.maxTokenLifetimeSeconds * 1000);
  const retired: string[] = [];
  for (const key of previous) {
    if (await keys.retire(key.kid, retiresAt, publishedUntil)) retired.push(key.kid);
  }
  return { created, retired };
}
