import { describe, expect, it } from 'vitest';
import { AccessTokenClaims, IntrospectionResponse, UserInfo } from '../src/index.js';
import { rejectedAt } from './rejected-at.js';

const claims = {
  iss: 'https://id.example.com/oauth',
  sub: 'u1',
  aud: 'kubectl',
  exp: 1_767_229_200,
  iat: 1_767_225_600,
  jti: 'j1',
  client_id: 'kubectl',
  scope: 'openid groups',
  sid: 'g1',
  auth_time: 1_767_225_000,
};

describe('RFC 9068 §2.2 access token claims', () => {
  it('accepts the idgate claims and keeps custom ones', () => {
    expect(AccessTokenClaims.parse({ ...claims, groups: ['dev'] })).toEqual({ ...claims, groups: ['dev'] });
  });

  it('accepts aud as a list', () => {
    expect(AccessTokenClaims.parse({ ...claims, aud: ['a', 'b'] }).aud).toEqual(['a', 'b']);
  });

  it.each(['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'client_id'] as const)('requires %s', (claim) => {
    const { [claim]: _omitted, ...rest } = claims;
    expect(rejectedAt(AccessTokenClaims, rest)).toEqual([claim]);
  });

  it('rejects non-integer times and a numeric aud', () => {
    expect(rejectedAt(AccessTokenClaims, { ...claims, exp: 1.5 })).toEqual(['exp']);
    expect(rejectedAt(AccessTokenClaims, { ...claims, iat: '1767225600' })).toEqual(['iat']);
    expect(rejectedAt(AccessTokenClaims, { ...claims, aud: 42 })).toEqual(['aud']);
  });
});

describe('OIDC Core §5.3.2 UserInfo response', () => {
  it('accepts sub alone and the scoped claims, keeping others', () => {
    expect(UserInfo.parse({ sub: 'u1' })).toEqual({ sub: 'u1' });
    const full = {
      sub: 'u1',
      name: 'Alice',
      preferred_username: 'alice',
      email: 'alice@example.com',
      email_verified: true,
      groups: ['dev'],
      locale: 'en',
    };
    expect(UserInfo.parse(full)).toEqual(full);
  });

  it('requires a non-empty sub and a boolean email_verified', () => {
    expect(rejectedAt(UserInfo, { name: 'Alice' })).toEqual(['sub']);
    expect(rejectedAt(UserInfo, { sub: '' })).toEqual(['sub']);
    expect(rejectedAt(UserInfo, { sub: 'u1', email_verified: 'true' })).toEqual(['email_verified']);
  });
});

describe('RFC 7662 §2.2 introspection response', () => {
  it('accepts an inactive token with nothing else', () => {
    expect(IntrospectionResponse.parse({ active: false })).toEqual({ active: false });
  });

  it('accepts an active token with its metadata', () => {
    const body = {
      active: true,
      scope: 'openid',
      client_id: 'kubectl',
      username: 'alice',
      token_type: 'Bearer',
      exp: 2,
      iat: 1,
      nbf: 1,
      sub: 'u1',
      aud: ['kubectl'],
      iss: 'https://id.example.com/oauth',
      jti: 'j',
      sid: 'g1',
    };
    expect(IntrospectionResponse.parse(body)).toEqual(body);
  });

  it('requires a boolean active', () => {
    expect(rejectedAt(IntrospectionResponse, {})).toEqual(['active']);
    expect(rejectedAt(IntrospectionResponse, { active: 'false' })).toEqual(['active']);
    expect(rejectedAt(IntrospectionResponse, { active: true, exp: 2.5 })).toEqual(['exp']);
  });
});
