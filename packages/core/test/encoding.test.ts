import { afterEach, describe, expect, it, vi } from 'vitest';
import { base64url, fromBase64url, randomBytes } from '../src/internal/encoding.js';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('base64url', () => {
  it('encodes the RFC 4648 §10 vectors, unpadded', () => {
    const vectors: [string, string][] = [
      ['', ''],
      ['f', 'Zg'],
      ['fo', 'Zm8'],
      ['foo', 'Zm9v'],
      ['foob', 'Zm9vYg'],
      ['fooba', 'Zm9vYmE'],
      ['foobar', 'Zm9vYmFy'],
    ];
    for (const [text, encoded] of vectors) expect(base64url(bytes(text))).toBe(encoded);
  });

  it('uses the URL-safe alphabet (RFC 4648 §5) and agrees with Node for every length and byte', () => {
    expect(base64url(new Uint8Array([0xfb, 0xff, 0xbf]))).toBe('-_-_');
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    for (let length = 0; length <= all.length; length++) {
      const input = all.subarray(256 - length);
      const encoded = base64url(input);
      expect(encoded).toBe(Buffer.from(input).toString('base64url'));
      expect(fromBase64url(encoded)).toEqual(Uint8Array.from(input));
    }
  });
});

describe('fromBase64url', () => {
  it('refuses what no base64url encoder writes', () => {
    for (const text of ['Zm8=', 'Zm9v=', 'Zm+v', 'Zm/v', 'Zm9 v', 'Zm9v\n', 'Z', 'Zm9vY', 'Zm9é']) {
      expect(() => fromBase64url(text)).toThrow(TypeError);
    }
  });
});

describe('randomBytes', () => {
  afterEach(() => vi.restoreAllMocks());

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
