import { describe, expect, it } from 'vitest';
import { Jwks, ProviderMetadata, PublicJwk } from '../src/index.js';
import { rejectedAt } from './rejected-at.js';

const issuer = 'https://id.example.com/oauth';
const metadata = {
  issuer,
  authorization_endpoint: `${issuer}/authorize`,
  token_endpoint: `${issuer}/token`,
  userinfo_endpoint: `${issuer}/userinfo`,
  jwks_uri: `${issuer}/keys`,
  scopes_supported: ['openid', 'profile', 'email', 'groups', 'offline_access'],
  response_types_supported: ['code'],
  grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials', 'password'],
  subject_types_supported: ['public'],
  id_token_signing_alg_values_supported: ['RS256', 'ES256'],
  token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
  claims_supported: ['sub', 'iss', 'aud', 'preferred_username', 'groups'],
  code_challenge_methods_supported: ['S256'],
};
const REQUIRED = [
  'issuer',
  'authorization_endpoint',
  'token_endpoint',
  'userinfo_endpoint',
  'jwks_uri',
  'scopes_supported',
  'response_types_supported',
  'grant_types_supported',
  'subject_types_supported',
  'id_token_signing_alg_values_supported',
  'token_endpoint_auth_methods_supported',
  'claims_supported',
  'code_challenge_methods_supported',
] as const;

describe('OpenID Connect Discovery 1.0 §3 / RFC 8414 §2 provider metadata', () => {
  it('accepts the thirteen fields idgate always serves', () => {
    expect(ProviderMetadata.parse(metadata)).toEqual(metadata);
  });

  it('names exactly thirteen required fields', () => {
    expect(REQUIRED).toHaveLength(13);
    expect(Object.keys(metadata).sort()).toEqual([...REQUIRED].sort());
  });

  it.each(REQUIRED)('rejects metadata without %s', (field) => {
    const { [field]: _omitted, ...rest } = metadata;
    expect(rejectedAt(ProviderMetadata, rest)).toEqual([field]);
  });

  it('keeps unknown fields and accepts optional registered ones', () => {
    const extended = {
      ...metadata,
      revocation_endpoint: `${issuer}/revoke`,
      introspection_endpoint: `${issuer}/introspect`,
      end_session_endpoint: `${issuer}/logout`,
      authorization_response_iss_parameter_supported: true,
      response_modes_supported: ['query'],
      mtls_endpoint_aliases: { token_endpoint: 'https://mtls.example.com/token' },
      'x-idgate-version': '0.1.0',
    };
    const parsed = ProviderMetadata.parse(extended);
    expect(parsed).toEqual(extended);
    expect(parsed['x-idgate-version']).toBe('0.1.0');
  });

  it.each([
    ['issuer', 'id.example.com'],
    ['issuer', 'ftp://id.example.com/oauth'],
    ['token_endpoint', 'not a url'],
    ['jwks_uri', 42],
    ['revocation_endpoint', 'javascript:alert(1)'],
  ])('rejects %s = %j (not an http(s) URL)', (field, value) => {
    expect(rejectedAt(ProviderMetadata, { ...metadata, [field]: value })).toEqual([field]);
  });

  it('accepts a plain http issuer (local development)', () => {
    expect(ProviderMetadata.parse({ ...metadata, issuer: 'http://localhost:8080/oauth' }).issuer).toBe(
      'http://localhost:8080/oauth',
    );
  });

  it('rejects empty required lists and empty strings inside them', () => {
    expect(rejectedAt(ProviderMetadata, { ...metadata, scopes_supported: [] })).toEqual(['scopes_supported']);
    expect(rejectedAt(ProviderMetadata, { ...metadata, claims_supported: ['sub', ''] })).toEqual([
      'claims_supported.1',
    ]);
  });

  it('rejects an optional field of the wrong type', () => {
    expect(rejectedAt(ProviderMetadata, { ...metadata, claims_parameter_supported: 'yes' })).toEqual([
      'claims_parameter_supported',
    ]);
  });
});

const rsa = {
  kty: 'RSA',
  kid: 'rsa-1',
  use: 'sig',
  alg: 'RS256',
  n: '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECP',
  e: 'AQAB',
};
const ec = {
  kty: 'EC',
  kid: 'ec-1',
  crv: 'P-256',
  x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
  y: 'x_FE',
};
const okp = { kty: 'OKP', kid: 'ed-1', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' };

describe('RFC 7517 §4 public JSON Web Key', () => {
  it.each([rsa, ec, okp])('accepts $kty key $kid', (jwk) => {
    expect(PublicJwk.parse(jwk)).toEqual(jwk);
  });

  it('keeps unknown members such as x5c', () => {
    expect(PublicJwk.parse({ ...okp, x5c: ['MIIB'] })).toEqual({ ...okp, x5c: ['MIIB'] });
  });

  it.each(['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'])(
    'rejects a key carrying private member %s',
    (member) => {
      const result = PublicJwk.safeParse({ ...rsa, [member]: 'c2VjcmV0' });
      expect(result.success).toBe(false);
      expect(result.error?.issues.map((i) => i.message)).toEqual([
        'a published JWK must not contain private key material',
      ]);
    },
  );

  it('rejects a symmetric key (kty oct with k)', () => {
    expect(rejectedAt(PublicJwk, { kty: 'oct', kid: 'h', k: 'c2VjcmV0' })).toContain('kty');
  });

  it('rejects a missing or empty kid and use other than sig', () => {
    const { kid: _kid, ...noKid } = okp;
    expect(rejectedAt(PublicJwk, noKid)).toEqual(['kid']);
    expect(rejectedAt(PublicJwk, { ...okp, kid: '' })).toEqual(['kid']);
    expect(rejectedAt(PublicJwk, { ...okp, use: 'enc' })).toEqual(['use']);
  });
});

describe('RFC 7517 §5 JSON Web Key Set', () => {
  it('accepts an empty set and a mixed set', () => {
    expect(Jwks.parse({ keys: [] })).toEqual({ keys: [] });
    expect(Jwks.parse({ keys: [rsa, ec, okp] })).toEqual({ keys: [rsa, ec, okp] });
  });

  it('rejects a set in which one key carries d, at that key', () => {
    expect(rejectedAt(Jwks, { keys: [okp, { ...ec, d: 'private' }] })).toEqual(['keys.1']);
  });

  it('rejects a set in which one key carries k', () => {
    expect(rejectedAt(Jwks, { keys: [{ ...rsa, k: 'c2VjcmV0' }] })).toEqual(['keys.0']);
  });

  it('rejects a missing keys member and a single key instead of a set', () => {
    expect(rejectedAt(Jwks, {})).toEqual(['keys']);
    expect(rejectedAt(Jwks, { keys: okp })).toEqual(['keys']);
  });
});
