import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAuditEventIds } from '../src/audit/record.js';
import { base64url } from '../src/internal/encoding.js';
import { pooledRandom, type Random, webCryptoRandom } from '../src/ports/runtime.js';
import { seededRandom } from '../src/testing.js';

describe('pooledRandom', () => {
  afterEach(() => vi.restoreAllMocks());
  const randomBytes = (length: number) => random.bytes(length);
  let random: Random;
  beforeEach(() => {
    random = pooledRandom();
  });

  it('draws small requests from a pool: one getRandomValues call serves many tokens', () => {
    const calls = vi.spyOn(crypto, 'getRandomValues');
    for (let i = 0; i < 1000; i++) randomBytes(16);
    // 16,000 bytes from 4 KiB fills: at most five calls, where one per token made a thousand.
    expect(calls.mock.calls.length).toBeLessThanOrEqual(5);
    expect(calls.mock.calls.length).toBeGreaterThanOrEqual(3);
  });

  it('never hands the same bytes out twice, across refills', () => {
    const seen = new Set<string>();
    // 5,000 × 16 bytes cross the 4 KiB pool many times, and lengths that do not divide it too.
    for (let i = 0; i < 5000; i++) {
      const token = base64url(randomBytes(i % 2 === 0 ? 16 : 12));
      expect(seen.has(token)).toBe(false);
      seen.add(token);
    }
  });

  it('returns bytes of their own: changing them changes no other result', () => {
    const a = randomBytes(32);
    const copy = Uint8Array.from(a);
    const b = randomBytes(32);
    a.fill(0);
    expect(Uint8Array.from(b)).not.toEqual(new Uint8Array(32));
    expect(b.buffer).not.toBe(a.buffer);
    expect(copy).not.toEqual(new Uint8Array(32));
    expect(a.length).toBe(32);
  });

  it('serves a request larger than the pool share straight from Web Crypto, at its length', () => {
    const calls = vi.spyOn(crypto, 'getRandomValues');
    const big = randomBytes(10_000);
    expect(big.length).toBe(10_000);
    expect(calls).toHaveBeenCalledTimes(1);
    expect(new Set(big).size).toBeGreaterThan(200);
  });

  it('gives every byte value about equally often', () => {
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 4096; i++) for (const byte of randomBytes(16)) counts[byte] = (counts[byte] ?? 0) + 1;
    // 65,536 bytes: 256 expected per value; a value under 150 or over 380 is far outside chance.
    expect(Math.min(...counts)).toBeGreaterThan(150);
    expect(Math.max(...counts)).toBeLessThan(380);
  });
});

describe('one pool per instance', () => {
  it('keeps no bytes between two pooled sources: each fills its own pool', () => {
    const calls = vi.spyOn(crypto, 'getRandomValues');
    pooledRandom().bytes(16);
    pooledRandom().bytes(16);
    expect(calls).toHaveBeenCalledTimes(2);
    vi.restoreAllMocks();
  });

  it('draws from the source it is given', () => {
    const a = pooledRandom(seededRandom('s'));
    const b = pooledRandom(seededRandom('s'));
    expect(a.bytes(16)).toEqual(b.bytes(16));
    expect(a.bytes(16)).not.toEqual(a.bytes(16));
  });
});

describe('webCryptoRandom', () => {
  it('answers each request straight from Web Crypto', () => {
    const calls = vi.spyOn(crypto, 'getRandomValues');
    expect(webCryptoRandom.bytes(16)).toHaveLength(16);
    expect(webCryptoRandom.bytes(16)).not.toEqual(webCryptoRandom.bytes(16));
    expect(calls).toHaveBeenCalledTimes(3);
    vi.restoreAllMocks();
  });
});

describe('seededRandom', () => {
  it('gives the same bytes for the same seed and other bytes for another', () => {
    const bytes = (seed: string) => [seededRandom(seed).bytes(40), seededRandom(seed).bytes(40)];
    const [a1, a2] = bytes('a');
    expect(a1).toEqual(a2);
    expect(seededRandom('b').bytes(40)).not.toEqual(a1);
  });

  it('never repeats a block within one source', () => {
    const random = seededRandom('x');
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) seen.add(base64url(random.bytes(16)));
    expect(seen.size).toBe(1000);
  });
});

describe('createAuditEventIds', () => {
  it('counts up within a millisecond for one maker, whatever another maker does meanwhile', () => {
    const ids = createAuditEventIds(seededRandom('one'));
    const other = createAuditEventIds(seededRandom('two'));
    const made = [ids(1000), other(1000), ids(1000), other(2000), ids(1000)];
    const mine = [made[0], made[2], made[4]] as string[];
    expect([...mine].sort()).toEqual(mine);
    expect(new Set(mine).size).toBe(3);
  });

  it('is deterministic over a seeded source', () => {
    expect(createAuditEventIds(seededRandom('s'))(5)).toBe(createAuditEventIds(seededRandom('s'))(5));
  });
});
