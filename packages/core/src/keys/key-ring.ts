import type { Jwks, PublicJwk, SigningAlgorithm } from '@idgate/schema';
import type { SigningKeyRecord } from '../model.js';
import { type JwsCrypto, type JwsSignFunction, type JwsVerifyFunction, webCryptoJws } from './jws-crypto.js';
import { openPrivateKey } from './seal.js';
import { activeSigningKey, signingKeyState } from './signing-key.js';

/** The key that signs new tokens. */
export interface ActiveSigningKey {
  kid: string;
  alg: SigningAlgorithm;
  /** Signs with this key through the ring's {@link JwsCrypto}. */
  sign: JwsSignFunction;
}

/** A key that verifies tokens: the active one and retired ones still published. */
export interface VerificationKey {
  kid: string;
  alg: SigningAlgorithm;
  /** Checks a signature with this key through the ring's {@link JwsCrypto}. */
  verify: JwsVerifyFunction;
}

/**
 * The signing keys of one server, loaded and ready: the newest active key signs, every published
 * key verifies, and {@link KeyRing.jwks} is the public set relying parties fetch.
 * @example
 * const ring = await KeyRing.load(await storage.signingKeys.list(), secret, new Date());
 * const token = await issueAccessToken(ring, issuer, input, clock);
 */
export class KeyRing {
  readonly #verification: Map<string, VerificationKey>;
  readonly #jwks: Jwks;

  private constructor(
    readonly signer: ActiveSigningKey,
    verification: VerificationKey[],
    published: PublicJwk[],
    /** When this ring goes stale (a key starts signing, retires or leaves JWKS); reload then. */
    readonly nextChangeAt: Date | undefined,
  ) {
    this.#verification = new Map(verification.map((key) => [key.kid, key]));
    this.#jwks = { keys: published };
  }

  /**
   * Loads the keys that are active or still published at `now`. `jwsCrypto` supplies the
   * signature primitives (Web Crypto unless given).
   * @throws Error when there is no active key or one cannot be decrypted with `secret`.
   */
  static async load(
    records: readonly SigningKeyRecord[],
    secret: string,
    now: Date,
    options: { activationDelaySeconds?: number; jwsCrypto?: JwsCrypto } = {},
  ): Promise<KeyRing> {
    const at = now.getTime();
    const delay = (options.activationDelaySeconds ?? 0) * 1000;
    const live = records
      .filter(
        (record) => signingKeyState(record, now) !== 'expired' || (record.retiredAt?.getTime() ?? 0) > at,
      )
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
    // A key signs until its retirement instant, which a rotation may set in the future.
    const signing = live.filter((record) => record.retiredAt === null || record.retiredAt.getTime() > at);
    const active = activeSigningKey(signing, at, delay);
    if (active === undefined) throw new Error('there is no active signing key');
    const changes = live.flatMap((record) => [
      record.createdAt.getTime() + delay,
      record.retiredAt?.getTime() ?? Number.POSITIVE_INFINITY,
      record.publishedUntil?.getTime() ?? Number.POSITIVE_INFINITY,
    ]);
    const next = Math.min(...changes.filter((t) => t > at));
    const jws = options.jwsCrypto ?? webCryptoJws;
    const privateJwk = await openPrivateKey(active.sealedPrivateJwk, secret, active.kid);
    const signer: ActiveSigningKey = {
      kid: active.kid,
      alg: active.alg,
      sign: await jws.signer(privateJwk as Record<string, unknown>, active.alg),
    };
    const verification = await Promise.all(
      live.map(
        async (record): Promise<VerificationKey> => ({
          kid: record.kid,
          alg: record.alg,
          verify: await jws.verifier(record.publicJwk, record.alg),
        }),
      ),
    );
    return new KeyRing(
      signer,
      verification,
      live.map((record) => record.publicJwk as PublicJwk),
      Number.isFinite(next) ? new Date(next) : undefined,
    );
  }

  /** The key with this `kid`, if it may verify tokens. */
  verificationKey(kid: string): VerificationKey | undefined {
    return this.#verification.get(kid);
  }

  /** Algorithms of the published keys, active first. */
  get algorithms(): SigningAlgorithm[] {
    return [...new Set([this.signer.alg, ...[...this.#verification.values()].map((key) => key.alg)])];
  }

  /** The public JWKS (RFC 7517 §5): active and still-published retired keys, never private parts. */
  jwks(): Jwks {
    return this.#jwks;
  }
}
