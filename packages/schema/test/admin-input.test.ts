import { describe, expect, it } from 'vitest';
import {
  CreateApiKeyInput,
  CreateUserInput,
  IdentitySubject,
  LinkIdentityInput,
  LoginAttempt,
  RedirectUri,
  RegisterClientInput,
  ScopeToken,
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

  it('refuses a blank name, no scope and an unknown scope', () => {
    expect(problems(CreateApiKeyInput, { name: ' ', scopes: [] })).toEqual([
      'name: must not be empty',
      'scopes: give at least one',
    ]);
    expect(problems(CreateApiKeyInput, { name: 'x', scopes: ['root'] })[0]).toMatch(/^scopes\.0: /);
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
