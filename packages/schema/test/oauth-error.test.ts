import { describe, expect, it } from 'vitest';
import { OAuthError, OAuthErrorCode, Problem, ProblemCode } from '../src/index.js';
import { rejectedAt } from './rejected-at.js';

describe('RFC 6749 §5.2 error response', () => {
  it('accepts error, error_description and error_uri, keeping unknown members', () => {
    const body = {
      error: 'invalid_grant',
      error_description: 'bad credentials',
      error_uri: 'https://id.example.com/docs/errors#invalid_grant',
      trace_id: 'abc',
    };
    expect(OAuthError.parse(body)).toEqual(body);
  });

  it('accepts error codes of other servers', () => {
    expect(OAuthError.parse({ error: 'invalid_dpop_proof' })).toEqual({ error: 'invalid_dpop_proof' });
  });

  it('rejects a missing or empty error and a non-string description', () => {
    expect(rejectedAt(OAuthError, { error_description: 'x' })).toEqual(['error']);
    expect(rejectedAt(OAuthError, { error: '' })).toEqual(['error']);
    expect(rejectedAt(OAuthError, { error: 'invalid_request', error_description: 42 })).toEqual([
      'error_description',
    ]);
  });

  it('rejects an RFC 9457 problem body', () => {
    expect(rejectedAt(OAuthError, { title: 'Unauthorized', status: 401, code: 'api_key_invalid' })).toEqual([
      'error',
    ]);
  });
});

describe('OAuth error codes (RFC 6749 §4.1.2.1, §5.2; RFC 6750 §3.1; RFC 7009; RFC 8707; OIDC Core)', () => {
  it.each([
    'invalid_request',
    'invalid_client',
    'invalid_grant',
    'unauthorized_client',
    'unsupported_grant_type',
    'invalid_scope',
    'access_denied',
    'invalid_token',
    'insufficient_scope',
    'unsupported_token_type',
    'login_required',
    'consent_required',
    'invalid_target',
  ])('accepts %s', (code) => {
    expect(OAuthErrorCode.parse(code)).toBe(code);
  });

  it('covers every RFC 6749 §5.2 token endpoint error', () => {
    const tokenEndpointErrors = [
      'invalid_request',
      'invalid_client',
      'invalid_grant',
      'unauthorized_client',
      'unsupported_grant_type',
      'invalid_scope',
    ];
    expect(OAuthErrorCode.options).toEqual(expect.arrayContaining(tokenEndpointErrors));
    expect(new Set(OAuthErrorCode.options).size).toBe(OAuthErrorCode.options.length);
  });

  it.each(['invalid_dpop_proof', 'INVALID_GRANT', 'invalid grant', ''])('rejects %j', (code) => {
    expect(rejectedAt(OAuthErrorCode, code)).toEqual(['']);
  });
});

describe('RFC 9457 problem details', () => {
  it('defaults type to about:blank', () => {
    expect(Problem.parse({ title: 'Unauthorized', status: 401, code: 'api_key_invalid' })).toEqual({
      type: 'about:blank',
      title: 'Unauthorized',
      status: 401,
      code: 'api_key_invalid',
    });
  });

  it('keeps type, detail, instance and extension members', () => {
    const body = {
      type: 'https://idgate.dev/problems/api-key-invalid',
      title: 'Unauthorized',
      status: 401,
      detail: 'the API key was revoked',
      instance: '/oauth/authenticate',
      code: 'api_key_invalid',
      revokedAt: '2026-01-01T00:00:00.000Z',
    };
    expect(Problem.parse(body)).toEqual(body);
  });

  it('requires title and the stable code', () => {
    expect(rejectedAt(Problem, { status: 401, code: 'api_key_invalid' })).toEqual(['title']);
    expect(rejectedAt(Problem, { title: 'Unauthorized', status: 401 })).toEqual(['code']);
  });

  it.each([399, 600, 200, 401.5, '401'])('rejects status %j (not an int error status)', (status) => {
    expect(rejectedAt(Problem, { title: 't', status, code: 'invalid_request' })).toEqual(['status']);
  });

  it('accepts the boundary statuses 400 and 599', () => {
    expect(Problem.parse({ title: 't', status: 400, code: 'invalid_request' }).status).toBe(400);
    expect(Problem.parse({ title: 't', status: 599, code: 'internal_error' }).status).toBe(599);
  });

  it.each(['api_key_revoked', 'API_KEY_INVALID', 'invalid_grant', ''])(
    'rejects the code %j, which idgate never sends',
    (code) => {
      expect(rejectedAt(Problem, { title: 'Unauthorized', status: 401, code })).toEqual(['code']);
    },
  );
});

describe('problem codes', () => {
  it.each([
    'api_key_missing',
    'api_key_invalid',
    'api_key_scope',
    'authorization_invalid',
    'invalid_token_review',
    'unsupported_media_type',
    'body_too_large',
    'invalid_body',
    'invalid_url',
    'not_found',
    'method_not_allowed',
    'identity_provider_not_found',
    'identity_provider_read_only',
    'identity_provider_exists',
    'invalid_identity_provider',
    'user_not_found',
    'storage_unavailable',
    'internal_error',
  ])('accepts %s', (code) => {
    expect(ProblemCode.parse(code)).toBe(code);
  });

  it('lists each code once', () => {
    expect(new Set(ProblemCode.options).size).toBe(ProblemCode.options.length);
  });
});
