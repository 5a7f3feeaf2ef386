import { describe, expect, it } from 'vitest';
import { escapeFilterValue } from '../../src/connectors/ldap.js';

describe('escapeFilterValue', () => {
  // The examples of RFC 4515 §4, as the values that produce them.
  it.each([
    [
      'Parens R Us (for all your parenthetical needs)',
      'Parens R Us \\28for all your parenthetical needs\\29',
    ],
    ['*', '\\2a'],
    ['C:\\MyFile', 'C:\\5cMyFile'],
    ['\u0000\u0000\u0000\u0004', '\\00\\00\\00\\04'],
  ])('escapes %j as %j (RFC 4515 §4)', (value, escaped) => {
    expect(escapeFilterValue(value)).toBe(escaped);
  });

  it('escapes every ASCII control character and DEL', () => {
    expect(escapeFilterValue('a\nb\tc\u001fd\u007f')).toBe('a\\0ab\\09c\\1fd\\7f');
  });

  it('leaves plain values and non-ASCII alone (RFC 4515 allows UTF-8: UTFMB)', () => {
    expect(escapeFilterValue('alice.liddell@idgate.test')).toBe('alice.liddell@idgate.test');
    // RFC 4515 §4 writes this one as Lu\c4\8di\c4\87; the raw form is just as valid.
    expect(escapeFilterValue('Lučić')).toBe('Lučić');
  });

  it('turns injection attempts into literal values', () => {
    expect(escapeFilterValue('alice)(uid=*')).toBe('alice\\29\\28uid=\\2a');
    expect(escapeFilterValue('*)(|(uid=*')).toBe('\\2a\\29\\28|\\28uid=\\2a');
    expect(escapeFilterValue('\\2a')).toBe('\\5c2a');
  });
});
