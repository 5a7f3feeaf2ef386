import { sha256 } from '@noble/hashes/sha2.js';
import { utf8 } from '../internal/encoding.js';
import type { Random } from './runtime.js';

/**
 * A {@link Random} that gives the same bytes for the same seed, every run: SHA-256 of the seed
 * and a counter, block after block. For tests that want to know which token, code or id comes
 * next; never for a server (anyone who knows the seed knows every secret).
 * @example const random = seededRandom('test'); random.bytes(16); // the same 16 bytes each run
 */
export function seededRandom(seed: string): Random {
  const prefix = utf8(`${seed}\u0000`);
  let block = new Uint8Array(0);
  let offset = 0;
  let counter = 0;
  const next = () => {
    const input = new Uint8Array(prefix.length + 4);
    input.set(prefix);
    new DataView(input.buffer).setUint32(prefix.length, counter++);
    block = sha256(input);
    offset = 0;
  };
  return {
    bytes(length) {
      const out = new Uint8Array(length);
      for (let i = 0; i < length; i++) {
        if (offset === block.length) next();
        out[i] = block[offset++] as number;
      }
      return out;
    },
  };
}
