import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { base64UrlEncode, base64Utf8, basicAuthorization, formBody, formUrlEncode } from '../src/encoding.js';

describe('RFC 6749 Appendix B application/x-www-form-urlencoded', () => {
  it('encodes the Appendix B example value', () => {
    expect(formUrlEncode(' %&+£€')).toBe('+%25%26%2B%C2%A3%E2%82%AC');
  });

  it('leaves only A–Z a–z 0–9 * - . _ unescaped', () => {
    expect(formUrlEncode("aZ09*-._!'()~:/?#[]@$,;=")).toBe(
      'aZ09*-._%21%27%28%29%7E%3A%2F%3F%23%5B%5D%40%24%2C%3B%3D',
    );
  });

  it('serializes fields in order, skipping undefined and repeating lists', () => {
    expect(
      formBody({ grant_type: 'client_credentials', scope: undefined, resource: ['a b', 'c'], n: 1 }),
    ).toBe('grant_type=client_credentials&resource=a+b&resource=c&n=1');
  });
});

describe('RFC 6749 §2.3.1 Basic credentials', () => {
  it('base64-encodes UTF-8 without Buffer', () => {
    expect(base64Utf8('a:b')).toBe('YTpi');
    expect(base64Utf8('é€𝄞')).toBe(Buffer.from('é€𝄞', 'utf8').toString('base64'));
  });

  it('form-urlencodes id and secret before joining them', () => {
    expect(basicAuthorization('my client', 's:cret')).toBe(
      `Basic ${Buffer.from('my+client:s%3Acret').toString('base64')}`,
    );
  });
});

describe('RFC 4648 §5 base64url', () => {
  it('uses - and _ and no padding, like node:crypto', () => {
    expect(base64UrlEncode(new Uint8Array([251, 255]))).toBe('-_8');
    expect(base64UrlEncode(new Uint8Array())).toBe('');
    for (let length = 0; length < 40; length += 1) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 37 + length * 101) % 256);
      expect(base64UrlEncode(bytes)).toBe(Buffer.from(bytes).toString('base64url'));
    }
  });
});

describe('runtime portability of @idgate/sdk', () => {
  const dir = new URL('../src/', import.meta.url);
  const files = readdirSync(dir).filter((name) => name.endsWith('.ts'));
  const code = (name: string) =>
    readFileSync(new URL(name, dir), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');

  it.each(files)('%s uses no Node-only API', (name) => {
    expect(code(name)).not.toMatch(/from 'node:|require\(|\bBuffer\b|\bprocess\b|__dirname/);
  });

  it.each(files)('%s draws randomness only from Web Crypto', (name) => {
    expect(code(name)).not.toMatch(/Math\.random|\bnode:crypto\b|randomBytes/);
  });

  it('imports only @idgate/schema, ky and relative modules', () => {
    const imports = files.flatMap((name) => [...code(name).matchAll(/from '([^']+)'/g)].map((m) => m[1]));
    expect([...new Set(imports.filter((spec) => !spec?.startsWith('./')))].sort()).toEqual([
      '@idgate/schema',
      'ky',
    ]);
  });
});
