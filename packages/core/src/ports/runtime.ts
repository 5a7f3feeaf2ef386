/** The source of the current time; inject a fixed one to test expiry. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The system clock. */
export const systemClock: Clock = { now: () => Date.now() };

/**
 * Cryptographically strong random bytes: every secret, token, code, key id and audit event id
 * idgate makes comes from here. A host may pass its own (tests pass a seeded one, see
 * `@idgate/core/testing`); `createIdgate` makes a {@link pooledRandom} per instance by default.
 */
export interface Random {
  /** `length` fresh bytes, never handed out twice. */
  bytes(length: number): Uint8Array<ArrayBuffer>;
}

/**
 * Web Crypto's CSPRNG, one `getRandomValues` call per request: holds no state, so it is what a
 * use case called on its own falls back to.
 */
export const webCryptoRandom: Random = {
  bytes: (length) => crypto.getRandomValues(new Uint8Array(length)),
};

// Web Crypto's getRandomValues costs about as much for 16 bytes as for 4 KiB (on Node 20 each call
// is a trip of ~7 µs through its bindings; 4 KiB take ~15 µs), and tokens, codes and ids take 12–32
// bytes at a time. So bytes come from a pool filled 4 KiB at a time, as Node's own randomUUID does:
// each byte is handed out once, and zeroed in the pool when it is.
const POOL_SIZE = 4096;

/**
 * `source` (Web Crypto by default) drawn 4 KiB at a time: small requests are served from the
 * pool, larger ones straight from `source`. The pool belongs to the returned object, so each
 * idgate instance has its own.
 * @example const random = pooledRandom(); random.bytes(16);
 */
export function pooledRandom(source: Random = webCryptoRandom): Random {
  let pool = new Uint8Array(0);
  let offset = 0;
  return {
    bytes(length) {
      if (length > POOL_SIZE / 8) return source.bytes(length);
      if (offset + length > pool.length) {
        pool = source.bytes(POOL_SIZE);
        offset = 0;
      }
      const bytes = pool.slice(offset, offset + length);
      pool.fill(0, offset, offset + length);
      offset += length;
      return bytes;
    },
  };
}

/** Hashes and verifies user passwords (argon2id on the server). */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** False for a wrong password or a hash it cannot read; never throws for those. */
  verify(hash: string, password: string): Promise<boolean>;
}
