import { describe, expect, it } from 'vitest';
import { base64url, fromBase64url } from '../src/internal/encoding.js';

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
