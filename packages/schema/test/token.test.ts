import { describe, expect, it } from 'vitest';
import {
  AuthorizationCodeGrantRequest,
  ClientCredentialsGrantRequest,
  PasswordGrantRequest,
  RefreshTokenGrantRequest,
  TokenRequest,
  TokenResponse,
} from '../src/index.js';
import { rejectedAt } from './rejected-at.js';

describe('RFC 6749 §5.1 token response', () => {
  it('accepts a full response and keeps unknown members', () => {
    const body = {
      access_token: 'eyJhbGciOiJFUzI1NiJ9.e30.sig',
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: 'rt_1',
      id_token: 'eyJ.id.token',
      scope: 'openid profile',
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    };
    expect(TokenResponse.parse(body)).toEqual(body);
  });

  it('keeps token_type exactly as sent', () => {
    expect(TokenResponse.parse({ access_token: 'a', token_type: 'Bearer', expires_in: 1 }).token_type).toBe(
      'Bearer',
    );
  });

  it('requires access_token, non-empty', () => {
    expect(rejectedAt(TokenResponse, { token_type: 'Bearer', expires_in: 3600 })).toEqual(['access_token']);
    expect(rejectedAt(TokenResponse, { access_token: '', token_type: 'Bearer', expires_in: 3600 })).toEqual([
      'access_token',
    ]);
  });

  it('requires expires_in', () => {
    expect(rejectedAt(TokenResponse, { access_token: 'a', token_type: 'Bearer' })).toEqual(['expires_in']);
  });

  it.each([0, 1, 3600, 2 ** 31 - 1])('accepts expires_in %j', (expires_in) => {
    expect(TokenResponse.parse({ access_token: 'a', expires_in }).expires_in).toBe(expires_in);
  });

  it.each([2 ** 31, 2 ** 53, -1, 1.5, '3600', null, Number.NaN, Number.POSITIVE_INFINITY])(
    'rejects expires_in %j (not a non-negative int32)',
    (expires_in) => {
      expect(rejectedAt(TokenResponse, { access_token: 'a', token_type: 'Bearer', expires_in })).toEqual([
        'expires_in',
      ]);
    },
  );

  it('rejects empty refresh_token and id_token', () => {
    const base = { access_token: 'a', expires_in: 60 };
    expect(rejectedAt(TokenResponse, { ...base, refresh_token: '' })).toEqual(['refresh_token']);
    expect(rejectedAt(TokenResponse, { ...base, id_token: '' })).toEqual(['id_token']);
  });
});

describe('RFC 6749 §4.3 password grant request', () => {
  it('accepts username, password, scope and client credentials in the body', () => {
    const body = {
      grant_type: 'password',
      username: 'alice',
      password: 's3cret',
      scope: 'openid',
      client_id: 'cli',
      client_secret: 'shh',
    };
    expect(PasswordGrantRequest.parse(body)).toEqual(body);
  });

  it('requires a non-empty username and password', () => {
    expect(rejectedAt(PasswordGrantRequest, { grant_type: 'password', username: 'alice' })).toEqual([
      'password',
    ]);
    expect(rejectedAt(PasswordGrantRequest, { grant_type: 'password', username: '', password: 'p' })).toEqual(
      ['username'],
    );
  });

  it('rejects another grant_type', () => {
    expect(
      rejectedAt(PasswordGrantRequest, { grant_type: 'client_credentials', username: 'a', password: 'p' }),
    ).toEqual(['grant_type']);
  });
});

describe('RFC 6749 §4.4 client credentials grant request', () => {
  it('accepts scope and RFC 8707 resource as a string or a list', () => {
    expect(
      ClientCredentialsGrantRequest.parse({ grant_type: 'client_credentials', resource: 'https://a' }),
    ).toEqual({ grant_type: 'client_credentials', resource: 'https://a' });
    const many = {
      grant_type: 'client_credentials',
      scope: 'tokenreview',
      resource: ['https://a', 'https://b'],
    };
    expect(ClientCredentialsGrantRequest.parse(many)).toEqual(many);
  });

  it('rejects more than 16 resources and an overlong client_id', () => {
    const resource = Array.from({ length: 17 }, (_, i) => `https://r${i}`);
    expect(rejectedAt(ClientCredentialsGrantRequest, { grant_type: 'client_credentials', resource })).toEqual(
      ['resource'],
    );
    expect(
      rejectedAt(ClientCredentialsGrantRequest, {
        grant_type: 'client_credentials',
        client_id: 'c'.repeat(257),
      }),
    ).toEqual(['client_id']);
  });
});

describe('RFC 6749 §4.1.3 / RFC 7636 §4.5 authorization code grant request', () => {
  it('accepts a code verifier of 43 and 128 characters', () => {
    for (const length of [43, 128]) {
      const body = { grant_type: 'authorization_code', code: 'c', code_verifier: 'v'.repeat(length) };
      expect(AuthorizationCodeGrantRequest.parse(body)).toEqual(body);
    }
  });

  it('rejects a code verifier of 42 or 129 characters and a missing code', () => {
    for (const length of [42, 129]) {
      const body = { grant_type: 'authorization_code', code: 'c', code_verifier: 'v'.repeat(length) };
      expect(rejectedAt(AuthorizationCodeGrantRequest, body)).toEqual(['code_verifier']);
    }
    expect(rejectedAt(AuthorizationCodeGrantRequest, { grant_type: 'authorization_code' })).toEqual(['code']);
  });
});

describe('RFC 6749 §6 refresh token grant request', () => {
  it('accepts a refresh token with a narrower scope', () => {
    const body = { grant_type: 'refresh_token', refresh_token: 'rt', scope: 'openid' };
    expect(RefreshTokenGrantRequest.parse(body)).toEqual(body);
  });

  it('requires the refresh token', () => {
    expect(rejectedAt(RefreshTokenGrantRequest, { grant_type: 'refresh_token' })).toEqual(['refresh_token']);
  });
});

describe('RFC 6749 §3.2 token request (discriminated on grant_type)', () => {
  it.each([
    [{ grant_type: 'password', username: 'alice', password: 'p' }],
    [{ grant_type: 'client_credentials' }],
    [{ grant_type: 'authorization_code', code: 'c', redirect_uri: 'https://app/cb' }],
    [{ grant_type: 'refresh_token', refresh_token: 'r' }],
  ])('accepts %j', (body) => {
    expect(TokenRequest.parse(body)).toEqual(body);
  });

  it('validates against the member selected by grant_type only', () => {
    // a password grant carrying a code is still a password grant: the code is dropped, not used
    expect(TokenRequest.parse({ grant_type: 'password', username: 'a', password: 'p', code: 'c' })).toEqual({
      grant_type: 'password',
      username: 'a',
      password: 'p',
    });
    expect(rejectedAt(TokenRequest, { grant_type: 'refresh_token', code: 'c' })).toEqual(['refresh_token']);
  });

  it.each(['urn:ietf:params:oauth:grant-type:saml2-bearer', 'implicit', 'PASSWORD', ''])(
    'rejects unknown grant_type %j',
    (grant_type) => {
      expect(rejectedAt(TokenRequest, { grant_type, username: 'a', password: 'p' })).toEqual(['grant_type']);
    },
  );

  it('rejects a missing grant_type', () => {
    expect(rejectedAt(TokenRequest, { username: 'a', password: 'p' })).toEqual(['grant_type']);
  });
});
