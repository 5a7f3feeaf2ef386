import { describe, expect, it } from 'vitest';
import {
  CreateTrustInput,
  InlineJwks,
  ISSUED_TOKEN_TYPE,
  MAX_TRUST_TTL,
  SUBJECT_TOKEN_TYPES,
  TOKEN_EXCHANGE_GRANT_TYPE,
  TokenExchangeGrantRequest,
  TokenRequest,
  TokenResponse,
  Trust,
  TrustEvaluation,
  TrustIssuer,
  TrustName,
  TrustTestInput,
  UpdateTrustInput,
  UsernameTemplate,
} from '../src/index.js';
import { rejectedAt } from './rejected-at.js';

const GHA = 'https://token.actions.githubusercontent.com';
const valid = {
  name: 'GHA',
  issuer: GHA,
  audience: 'idgate',
  condition: 'claims.repository == "acme/infra"',
  username: 'ci:{repository}',
  clusters: ['prod'],
  maxTtl: 900,
};

describe('trusts (token exchange)', () => {
  it('names the RFC 8693 grant and token types', () => {
    expect(TOKEN_EXCHANGE_GRANT_TYPE).toBe('urn:ietf:params:oauth:grant-type:token-exchange');
    expect(ISSUED_TOKEN_TYPE).toBe('urn:ietf:params:oauth:token-type:access_token');
    expect(SUBJECT_TOKEN_TYPES).toContain('urn:ietf:params:oauth:token-type:jwt');
    expect(MAX_TRUST_TTL).toBe(86_400);
  });

  it('reads a trust, lower-casing its name and defaulting its groups', () => {
    expect(CreateTrustInput.parse(valid)).toEqual({ ...valid, name: 'gha', groups: [] });
    expect(TrustName.parse('Cluster-A')).toBe('cluster-a');
  });

  it('refuses a bad issuer, template, lifetime, cluster list or private key', () => {
    expect(TrustIssuer.parse('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
    expect(rejectedAt(TrustIssuer, 'http://issuer.example')).toEqual(['']);
    expect(rejectedAt(TrustIssuer, `${GHA}?x=1`)).toEqual(['']);
    expect(rejectedAt(UsernameTemplate, '{repository}')).toEqual(['']);
    expect(rejectedAt(UsernameTemplate, 'system:{sub}')).toEqual(['']);
    expect(rejectedAt(UsernameTemplate, 'ci:{repo sitory}')).toEqual(['']);
    expect(rejectedAt(CreateTrustInput, { ...valid, maxTtl: MAX_TRUST_TTL + 1 })).toEqual(['maxTtl']);
    expect(rejectedAt(CreateTrustInput, { ...valid, clusters: [] })).toEqual(['clusters']);
    expect(rejectedAt(CreateTrustInput, { ...valid, extra: 1 })).toEqual(['']);
    expect(InlineJwks.parse({ keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }] }).keys).toHaveLength(1);
    expect(rejectedAt(InlineJwks, { keys: [{ kty: 'oct', k: 'secret' }] })).toEqual(['keys']);
    expect(rejectedAt(InlineJwks, { keys: [] })).toEqual(['keys']);
  });

  it('reads a change, where null clears', () => {
    expect(UpdateTrustInput.parse({ condition: null, clusters: ['prod', 'staging'] })).toEqual({
      condition: null,
      clusters: ['prod', 'staging'],
    });
    expect(rejectedAt(UpdateTrustInput, { name: 'other' })).toEqual(['']);
  });

  it('reads a listed trust, a test input and an evaluation', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const trust = {
      ...valid,
      name: 'gha',
      jwks: null,
      discoveryUrl: null,
      groups: [],
      createdAt: at,
      updatedAt: at,
    };
    expect(Trust.parse(trust)).toEqual(trust);
    expect(TrustTestInput.parse({ token: 'eyJ', cluster: 'Prod' })).toEqual({
      token: 'eyJ',
      cluster: 'prod',
    });
    expect(rejectedAt(TrustTestInput, { token: '' })).toEqual(['token']);
    const evaluation = {
      trust: 'gha',
      matched: true,
      rule: null,
      reason: null,
      issuer: GHA,
      subject: 'repo:acme/infra:ref:refs/heads/main',
      run: { repository: 'acme/infra' },
      identity: { username: 'ci:acme/infra', groups: [] },
      clusters: ['prod'],
      maxTtl: 900,
    };
    expect(TrustEvaluation.parse(evaluation)).toEqual(evaluation);
    expect(rejectedAt(TrustEvaluation, { ...evaluation, matched: 'yes' })).toEqual(['matched']);
  });

  it('reads a token exchange request and its answer', () => {
    const request = {
      grant_type: TOKEN_EXCHANGE_GRANT_TYPE,
      subject_token: 'eyJ',
      subject_token_type: SUBJECT_TOKEN_TYPES[0],
      audience: 'prod',
      expires_in: '300',
    };
    expect(TokenExchangeGrantRequest.parse(request)).toEqual(request);
    expect(TokenRequest.parse(request)).toEqual(request);
    expect(rejectedAt(TokenExchangeGrantRequest, { ...request, subject_token: undefined })).toEqual([
      'subject_token',
    ]);
    expect(rejectedAt(TokenExchangeGrantRequest, { ...request, expires_in: '0' })).toEqual(['expires_in']);
    expect(
      TokenResponse.parse({ access_token: 'a', expires_in: 60, issued_token_type: ISSUED_TOKEN_TYPE })
        .issued_token_type,
    ).toBe(ISSUED_TOKEN_TYPE);
  });
});
