import type { PasswordHasher } from '@idgate/core';
import argon2 from 'argon2';

/**
 * argon2id with the parameters OWASP's Password Storage Cheat Sheet recommends (19 MiB, t=2, p=1);
 * the PHC string records them, so changing them later still verifies old hashes.
 */
export function argon2idHasher(options: { memoryCost?: number; timeCost?: number } = {}): PasswordHasher {
  const parameters = {
    type: argon2.argon2id,
    memoryCost: options.memoryCost ?? 19_456,
    timeCost: options.timeCost ?? 2,
    parallelism: 1,
  } as const;
  return {
    hash: (password) => argon2.hash(password, parameters),
    async verify(hash, password) {
      try {
        return await argon2.verify(hash, password);
      } catch {
        return false;
      }
    },
  };
}
