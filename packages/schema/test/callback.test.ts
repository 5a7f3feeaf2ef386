import { describe, expect, it } from 'vitest';
import { CallbackCodeQuery, CallbackErrorQuery, CallbackQuery, CallbackTokenQuery } from '../src/index.js';
import { rejectedAt } from './rejected-at.js';

/** A query string as the callback receives it: every value a string. */
const query = (qs: string) => Object.fromEntries(new URLSearchParams(qs));

describe('callback query, token form (RFC 6749 §4.2.2 / §7.1)', () => {
  it('lowercases token_type and parses expires_in to an integer', () => {
    expect(
      CallbackTokenQuery.parse(
        query('access_token=gho_x&token_type=BEARER&expires_in=3600&scope=read&state=s1'),
      ),
    ).toEqual({ access_token: 'gho_x', token_type: 'bearer', expires_in: 3600, scope: 'read', state: 's1' });
  });

  it('leaves expires_in absent when it is not sent', () => {
    const parsed = CallbackTokenQuery.parse(query('access_token=a&token_type=Bearer&state=s'));
    expect(parsed).toEqual({ access_token: 'a', token_type: 'bearer', state: 's' });
    expect('expires_in' in parsed).toBe(false);
  });

  it.each([
    ['0', 0],
    ['2147483647', 2147483647],
    ['007', 7],
  ])('parses expires_in %j to %j', (raw, value) => {
    expect(
      CallbackTokenQuery.parse({ access_token: 'a', token_type: 'bearer', expires_in: raw, state: 's' }),
    ).toEqual({ access_token: 'a', token_type: 'bearer', expires_in: value, state: 's' });
  });

  it.each(['abc', '', ' ', '-1', '1.5', '1e3', '0x10', '2147483648', ' 60', 'Infinity'])(
    'rejects expires_in %j',
    (expires_in) => {
      expect(
        rejectedAt(CallbackTokenQuery, { access_token: 'a', token_type: 'bearer', expires_in, state: 's' }),
      ).toEqual(['expires_in']);
    },
  );

  it('requires access_token, token_type and state', () => {
    expect(rejectedAt(CallbackTokenQuery, query('token_type=bearer&state=s'))).toEqual(['access_token']);
    expect(rejectedAt(CallbackTokenQuery, query('access_token=a&state=s'))).toEqual(['token_type']);
    expect(rejectedAt(CallbackTokenQuery, query('access_token=a&token_type=bearer'))).toEqual(['state']);
  });

  it('bounds state to 1–512 characters', () => {
    const base = { access_token: 'a', token_type: 'bearer' };
    expect(CallbackTokenQuery.parse({ ...base, state: 's'.repeat(512) }).state).toHaveLength(512);
    expect(rejectedAt(CallbackTokenQuery, { ...base, state: 's'.repeat(513) })).toEqual(['state']);
    expect(rejectedAt(CallbackTokenQuery, { ...base, state: '' })).toEqual(['state']);
  });
});

describe('callback query, code form (RFC 6749 §4.1.2, RFC 9207)', () => {
  it('accepts code and state, with iss when sent', () => {
    expect(CallbackCodeQuery.parse(query('code=abc&state=s'))).toEqual({ code: 'abc', state: 's' });
    expect(CallbackCodeQuery.parse(query('code=abc&state=s&iss=https%3A%2F%2Fgithub.com'))).toEqual({
      code: 'abc',
      state: 's',
      iss: 'https://github.com',
    });
  });

  it('rejects an empty code and a missing state', () => {
    expect(rejectedAt(CallbackCodeQuery, query('code=&state=s'))).toEqual(['code']);
    expect(rejectedAt(CallbackCodeQuery, query('code=abc'))).toEqual(['state']);
  });
});

describe('callback query, error form (RFC 6749 §4.1.2.1)', () => {
  it('accepts error with description, uri and state', () => {
    const q = query(
      'error=access_denied&error_description=user+denied&error_uri=https%3A%2F%2Fe%2Fx&state=s',
    );
    expect(CallbackErrorQuery.parse(q)).toEqual({
      error: 'access_denied',
      error_description: 'user denied',
      error_uri: 'https://e/x',
      state: 's',
    });
  });

  it('accepts an error without state (the upstream may not echo it)', () => {
    expect(CallbackErrorQuery.parse(query('error=server_error'))).toEqual({ error: 'server_error' });
  });

  it('rejects an empty error', () => {
    expect(rejectedAt(CallbackErrorQuery, query('error=&state=s'))).toEqual(['error']);
  });
});

describe('callback query (error, then code, then token form)', () => {
  it('prefers the error form over the code form', () => {
    expect(CallbackQuery.parse(query('error=access_denied&code=abc&state=s'))).toEqual({
      error: 'access_denied',
      state: 's',
    });
  });

  it('prefers the code form over the token form', () => {
    expect(CallbackQuery.parse(query('code=abc&access_token=a&token_type=bearer&state=s'))).toEqual({
      code: 'abc',
      state: 's',
    });
  });

  it('falls back to the token form, lowercasing token_type', () => {
    expect(CallbackQuery.parse(query('access_token=a&token_type=BEARER&expires_in=60&state=s'))).toEqual({
      access_token: 'a',
      token_type: 'bearer',
      expires_in: 60,
      state: 's',
    });
  });

  it('rejects a query that matches no form', () => {
    expect(CallbackQuery.safeParse({}).success).toBe(false);
    expect(CallbackQuery.safeParse(query('state=s')).success).toBe(false);
    expect(
      CallbackQuery.safeParse(query('access_token=a&token_type=bearer&expires_in=abc&state=s')).success,
    ).toBe(false);
  });
});
