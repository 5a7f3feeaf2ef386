import { describe, expect, it } from 'vitest';
import {
  AdminApiScope,
  API_KEY_ROLES,
  ApiKeyRole,
  ApiKeyScope,
  CreateApiKeyInput,
  CreateUserInput,
  IdentitySubject,
  LinkIdentityInput,
  LoginAttempt,
  RedirectUri,
  RegisterClientInput,
  ScopeToken,
  UpdateApiKeyInput,
} from '../src/index.js';

/** The messages of the issues `schema` finds in `input`, by dotted path. */
function problems(
  schema: { safeParse(input: unknown): { success: boolean; error?: { issues: ReadonlyArray<Issue> } } },
  input: unknown,
): string[] {
  const result = schema.safeParse(input);
  expect(result.success).toBe(false);
  return (result.error?.issues ?? []).map((i) => `${i.path.map(String).join('.')}: ${i.message}`);
}
type Issue = { path: ReadonlyArray<PropertyKey>; message: string };

describe('CreateUserInput', () => {
  it('fills nulls and an empty group list, and keeps each group once', () => {
    expect(CreateUserInput.parse({ username: 'alice' })).toEqual({
      username: 'alice',
      email: null,
      displayName: null,
      groups: [],
    });
    expect(CreateUserInput.parse({ username: 'a', groups: ['dev', 'ops', 'dev'] }).groups).toEqual([
      'dev',
      'ops',
    ]);
  });

  it('names the bad email, the empty display name and the system: group', () => {
    expect(
      problems(CreateUserInput, {
        username: 'a',
        email: 'nope',
        displayName: '  ',
        groups: ['system:masters'],
      }),
    ).toEqual([
      'email: must be an email address',
      'displayName: must not be empty',
      'groups.0: must not start with "system:", which Kubernetes reserves',
    ]);
    expect(problems(CreateUserInput, { username: 'a', password: 'x' })).toEqual([
      ': Unrecognized key: "password"',
    ]);
  });
});

describe('CreateApiKeyInput', () => {
  it('trims the name and keeps each scope once', () => {
    expect(CreateApiKeyInput.parse({ name: ' ci ', scopes: ['admin', 'admin'] })).toEqual({
      name: 'ci',
      scopes: ['admin'],
    });
  });

  it('takes roles beside scopes or instead of them, each once', () => {
    expect(CreateApiKeyInput.parse({ name: 'desk', roles: ['helpdesk', 'helpdesk'] })).toEqual({
      name: 'desk',
      roles: ['helpdesk'],
    });
    expect(
      CreateApiKeyInput.parse({ name: 'x', scopes: ['audit:read'], roles: ['auditor'], expiresIn: 60 }),
    ).toEqual({ name: 'x', scopes: ['audit:read'], roles: ['auditor'], expiresIn: 60 });
  });

  it('refuses a blank name, no scope or role and an unknown scope or role', () => {
    expect(problems(CreateApiKeyInput, { name: ' ', scopes: [] })).toEqual([
      'name: must not be empty',
      'scopes: give at least one scope or role',
    ]);
    expect(problems(CreateApiKeyInput, { name: 'x', roles: [] })).toEqual([
      'scopes: give at least one scope or role',
    ]);
    expect(problems(CreateApiKeyInput, { name: 'x', scopes: ['root'] })[0]).toMatch(/^scopes\.0: /);
    expect(problems(CreateApiKeyInput, { name: 'x', roles: ['root'] })[0]).toMatch(/^roles\.0: /);
    expect(problems(CreateApiKeyInput, { name: 'x', scopes: ['Users:Read'] })[0]).toMatch(/^scopes\.0: /);
  });
});

describe('API key scopes and roles', () => {
  it('are the admin API scopes, by area, beside tokenreview and admin', () => {
    expect(AdminApiScope.options).toEqual([
      'users:read',
      'users:write',
      'users:unlock',
      'users:password',
      'sessions:read',
      'sessions:write',
      'sessions:revoke-all',
      'clients:read',
      'clients:write',
      'clusters:read',
      'clusters:write',
      'trusts:read',
      'trusts:write',
      'identity-providers:read',
      'identity-providers:write',
      'keys:read',
      'keys:rotate',
      'keys:retire',
      'api-keys:read',
      'api-keys:write',
      'audit:read',
      'declarations:apply',
    ]);
    expect(ApiKeyScope.options).toEqual(['tokenreview', 'admin', ...AdminApiScope.options]);
    expect(AdminApiScope.safeParse('admin').success).toBe(false);
    expect(AdminApiScope.safeParse('tokenreview').success).toBe(false);
  });

  it('give each role scopes of the admin API: the auditor every read scope, the admin role admin', () => {
    expect(ApiKeyRole.options).toEqual(['auditor', 'helpdesk', 'operator', 'admin']);
    expect(ApiKeyRole.safeParse('root').success).toBe(false);
    expect(API_KEY_ROLES.auditor).toEqual(AdminApiScope.options.filter((scope) => scope.endsWith(':read')));
    expect(API_KEY_ROLES.admin).toEqual(['admin']);
    for (const role of ['auditor', 'helpdesk', 'operator'] as const) {
      for (const scope of API_KEY_ROLES[role]) expect(AdminApiScope.options, role).toContain(scope);
      expect(API_KEY_ROLES[role]).not.toContain('api-keys:write');
    }
  });
});

describe('UpdateApiKeyInput', () => {
  it('takes a name, and an expiry in seconds or as an instant (null: never)', () => {
    expect(UpdateApiKeyInput.parse({})).toEqual({});
    expect(UpdateApiKeyInput.parse({ name: ' ci ', expiresIn: 60 })).toEqual({ name: 'ci', expiresIn: 60 });
    expect(UpdateApiKeyInput.parse({ expiresAt: null })).toEqual({ expiresAt: null });
    expect(UpdateApiKeyInput.parse({ expiresAt: '2027-01-01T00:00:00+01:00' })).toEqual({
      expiresAt: '2027-01-01T00:00:00+01:00',
    });
  });

  it('refuses both expiries, a bad one, a blank name and any other field (scopes never change)', () => {
    expect(problems(UpdateApiKeyInput, { expiresIn: 60, expiresAt: null })).toEqual([
      'expiresAt: give expiresIn or expiresAt, not both',
    ]);
    expect(problems(UpdateApiKeyInput, { expiresIn: 0 })).toEqual([
      'expiresIn: must be a positive whole number of seconds',
    ]);
    expect(problems(UpdateApiKeyInput, { expiresIn: 315_360_001 })).toEqual([
      'expiresIn: must be at most 315360000 seconds (ten years)',
    ]);
    expect(problems(UpdateApiKeyInput, { expiresAt: '2027-01-01' })).toEqual([
      'expiresAt: must be an ISO 8601 instant with an offset (2026-01-01T00:00:00Z), or null for never',
    ]);
    expect(problems(UpdateApiKeyInput, { name: ' ' })).toEqual(['name: must not be empty']);
    expect(problems(UpdateApiKeyInput, { scopes: ['admin'] })).toEqual([': Unrecognized key: "scopes"']);
  });
});

describe('RedirectUri', () => {
  it.each([
    'https://app.example.com/cb',
    'http://localhost:8400/cb',
    'http://127.0.0.1/cb',
    'http://[::1]:9000/cb?x=1',
  ])('accepts %j exactly as given', (uri) => {
    expect(RedirectUri.parse(uri)).toBe(uri);
  });

  it.each([
    ['https://app.example.com/ cb', 'must not contain whitespace'],
    ['/cb', 'must be an absolute URL'],
    ['https://app.example.com/cb#top', 'must not have a fragment (RFC 6749 §3.1.2)'],
    [
      'http://app.example.com/cb',
      'must use https (http is allowed only for localhost, 127.0.0.1 or [::1], RFC 8252 §7.3)',
    ],
    ['myapp:/cb', 'must use https (http is allowed only for localhost, 127.0.0.1 or [::1], RFC 8252 §7.3)'],
  ])('refuses %j: %s', (uri, message) => {
    expect(problems(RedirectUri, uri)).toEqual([`: ${message}`]);
  });
});

describe('RegisterClientInput', () => {
  it('leaves grant types, scopes and lifetime to the defaults of registration', () => {
    expect(RegisterClientInput.parse({ name: 'CI' })).toEqual({
      name: 'CI',
      redirectUris: [],
      postLogoutRedirectUris: [],
      audiences: [],
      public: false,
      trusted: false,
    });
  });

  it('names each bad field', () => {
    expect(
      problems(RegisterClientInput, {
        name: '',
        grantTypes: ['implicit'],
        scopes: ['open"id'],
        audiences: ['a b'],
        accessTokenTtl: 0,
      }).map((line) => line.split(':')[0]),
    ).toEqual(['name', 'grantTypes.0', 'scopes.0', 'audiences.0', 'accessTokenTtl']);
    expect(problems(RegisterClientInput, { name: 'x', accessTokenTtl: 1.5 })).toEqual([
      'accessTokenTtl: must be a positive whole number of seconds',
    ]);
    expect(ScopeToken.safeParse('offline_access').success).toBe(true);
  });
});

describe('LinkIdentityInput and IdentitySubject', () => {
  it('takes a subject of 1 to 1024 characters', () => {
    expect(LinkIdentityInput.parse({ username: 'a', provider: 'github', subject: '583231' }).subject).toBe(
      '583231',
    );
    expect(problems(IdentitySubject, '')).toEqual([': must not be empty']);
    expect(problems(IdentitySubject, 'x'.repeat(1025))).toEqual([': must be at most 1024 characters']);
  });
});

describe('LoginAttempt', () => {
  const attempt = {
    id: 'a1',
    username: 'alice',
    userId: null,
    sourceAddress: '203.0.113.7',
    provider: 'password',
    success: false,
    reason: 'invalid_credentials',
    createdAt: '2026-01-01T00:00:00.000Z',
  };

  it('accepts an attempt of an unknown username and refuses a date-only time', () => {
    expect(LoginAttempt.parse(attempt)).toEqual(attempt);
    expect(problems(LoginAttempt, { ...attempt, createdAt: '2026-01-01' })[0]).toMatch(/^createdAt: /);
  });
});
