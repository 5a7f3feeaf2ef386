import { OAuthErrorCode, ProblemCode } from '@idgate/schema';
import { describe, expect, it, vi } from 'vitest';
import { ApiKeyError } from '../src/api-keys/api-key.js';
import { AuthorizationError } from '../src/authorize/request.js';
import { ConnectorError, type ConnectorFailure } from '../src/connectors/types.js';
import { type AnyIdgateError, isIdgateError } from '../src/error-family.js';
import { IdgateError, OAuthProtocolError } from '../src/errors.js';
import { StorageConflictError, StorageUnavailableError } from '../src/ports/storage.js';

const CONNECTOR_FAILURES: ConnectorFailure[] = [
  'upstream_error',
  'upstream_unavailable',
  'invalid_upstream_response',
  'not_allowed',
  'invalid_upstream_token',
];

describe('one error family', () => {
  const members: AnyIdgateError[] = [
    new OAuthProtocolError('invalid_grant', 'the refresh token has expired'),
    new AuthorizationError('access_denied', 'the user denied the request', 'https://rp.example/cb', 's'),
    new ApiKeyError('invalid', 'the API key is not valid'),
    new ConnectorError('upstream_error', 'GitHub refused the sign-in'),
    new StorageConflictError('username'),
    new StorageUnavailableError('unreachable'),
  ];

  it.each(members.map((error) => [error.name, error] as const))(
    '%s is an IdgateError with a status, a wire form for OAuth and a problem code',
    (_name, error) => {
      expect(error).toBeInstanceOf(IdgateError);
      expect(error).toBeInstanceOf(Error);
      expect(isIdgateError(error)).toBe(true);
      expect(error.status).toBeGreaterThanOrEqual(400);
      expect(OAuthErrorCode.options).toContain(error.toJSON().error);
      expect(ProblemCode.options).toContain(error.problemCode);
      expect(error.toJSON().error_description).toBe(error.description);
      expect(error.message).toBe(error.description);
    },
  );

  it('narrows by kind, then by code', () => {
    const describe = (error: AnyIdgateError): string => {
      switch (error.kind) {
        case 'api_key':
          return error.code === 'forbidden' ? 'another key' : 'a key';
        case 'storage_unavailable':
          return `retry after ${error.headers['Retry-After']}`;
        default:
          return error.code;
      }
    };
    expect(members.map(describe)).toEqual([
      'invalid_grant',
      'access_denied',
      'a key',
      'upstream_error',
      'conflict',
      'retry after 5',
    ]);
  });

  it('recognises an error of another copy of the package, and nothing that merely looks like one', async () => {
    // A fresh module registry evaluates the files again: a second copy of the classes and the guard.
    vi.resetModules();
    const copy: typeof import('../src/errors.js') = await import('../src/errors.js');
    const copyFamily: typeof import('../src/error-family.js') = await import('../src/error-family.js');
    const foreign = new copy.OAuthProtocolError('invalid_request', 'from the other copy');
    expect(foreign).not.toBeInstanceOf(IdgateError);
    expect(isIdgateError(foreign)).toBe(true);
    expect(copyFamily.isIdgateError(new ApiKeyError('missing', 'an API key is required'))).toBe(true);
    expect(new ApiKeyError('missing', 'x')).not.toBeInstanceOf(copy.IdgateError);

    const lookalike = Object.assign(new Error('x'), { name: 'IdgateError', error: 'invalid_request' });
    expect(isIdgateError(lookalike)).toBe(false);
    expect(isIdgateError({ code: 'conflict', status: 409 })).toBe(false);
    expect(isIdgateError(undefined)).toBe(false);
  });

  it('keeps the cause for the log and out of the wire form', () => {
    const cause = new Error('connect ECONNREFUSED 10.0.0.5:5432 password=hunter2');
    const error = new StorageUnavailableError('unreachable', { cause });
    expect(error.cause).toBe(cause);
    expect(JSON.stringify(error.toJSON())).not.toMatch(/ECONNREFUSED|hunter2|5432/);
    expect(error.description).not.toMatch(/ECONNREFUSED|hunter2|5432/);
  });
});

describe('OAuth protocol errors', () => {
  it.each([
    ['invalid_request', 400],
    ['invalid_grant', 400],
    ['invalid_client', 401],
    ['invalid_token', 401],
    ['insufficient_scope', 403],
    ['access_denied', 403],
    ['slow_down', 429],
    ['server_error', 500],
    ['temporarily_unavailable', 503],
  ] as const)('%s defaults to %i', (code, status) => {
    expect(new OAuthProtocolError(code, 'x').status).toBe(status);
  });

  it('takes a status, headers and redirectability from the thrower', () => {
    const error = new OAuthProtocolError('invalid_request', 'an access token is required', {
      status: 401,
      headers: { 'WWW-Authenticate': 'Bearer realm="idgate"' },
    });
    expect([error.status, error.headers, error.redirectable]).toEqual([
      401,
      { 'WWW-Authenticate': 'Bearer realm="idgate"' },
      false,
    ]);
    expect(new AuthorizationError('login_required', 'x', 'https://rp.example/cb').redirectable).toBe(true);
    expect(new AuthorizationError('invalid_client', 'x').redirectable).toBe(false);
  });

  it('reads as a problem that tells a client fault from a server fault', () => {
    expect(new OAuthProtocolError('invalid_scope', 'x').problemCode).toBe('invalid_request');
    expect(new OAuthProtocolError('server_error', 'x').problemCode).toBe('internal_error');
    expect(new OAuthProtocolError('temporarily_unavailable', 'x').problemCode).toBe('service_unavailable');
  });
});

describe('connector errors', () => {
  it.each(CONNECTOR_FAILURES)('%s is a 400, never a 5xx, and its own problem code', (code) => {
    const error = new ConnectorError(code, 'the sign-in failed');
    expect(error.status).toBe(400);
    expect(error.problemCode).toBe(code);
  });

  it('answers access_denied on an OAuth endpoint, or temporarily_unavailable when trying again may help', () => {
    expect(CONNECTOR_FAILURES.map((code) => new ConnectorError(code, 'x').toJSON().error)).toEqual([
      'access_denied',
      'temporarily_unavailable',
      'access_denied',
      'access_denied',
      'access_denied',
    ]);
  });
});

describe('storage errors', () => {
  it('a conflict is a 409 naming the field', () => {
    const error = new StorageConflictError('clientId');
    expect([error.status, error.code, error.field, error.description]).toEqual([
      409,
      'conflict',
      'clientId',
      'clientId already exists',
    ]);
  });

  it.each(['unreachable', 'busy', 'timeout'] as const)(
    'unavailable storage (%s) is a 503 with Retry-After and a generic description',
    (code) => {
      const error = new StorageUnavailableError(code);
      expect(error.status).toBe(503);
      expect(error.headers).toEqual({ 'Retry-After': '5' });
      expect(error.toJSON()).toEqual({
        error: 'temporarily_unavailable',
        error_description: 'the service is unavailable; try again shortly',
      });
      expect(error.problemCode).toBe('storage_unavailable');
    },
  );

  it('asks for the wait the thrower knows', () => {
    expect(new StorageUnavailableError('busy', { retryAfterSeconds: 1 }).headers).toEqual({
      'Retry-After': '1',
    });
  });
});
