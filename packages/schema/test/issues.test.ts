import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  describeFirstIssue,
  IDENTITY_PROVIDER_SECRETS,
  IdentityProviderConfig,
  TokenReviewRequest,
  Username,
} from '../src/index.js';

/** The line describeFirstIssue words for what `schema` finds wrong in `input`. */
function line(
  schema: z.core.$ZodType,
  input: unknown,
  options: Parameters<typeof describeFirstIssue>[1] = {},
) {
  const result = z.safeParse(schema, input);
  if (result.success) throw new Error('expected a refusal');
  return describeFirstIssue(result.error, { input, ...options });
}

const GITLAB = { type: 'gitlab', name: 'gl', clientId: 'x', clientSecret: 'hunter2-secret' };

describe('describeFirstIssue', () => {
  it('names the field and quotes the text at fault', () => {
    expect(line(Username, 'al ice', { label: () => 'username' })).toBe(
      'username "al ice": may hold only letters, digits and . _ @ -, starting with a letter or digit',
    );
    expect(line(IdentityProviderConfig, { ...GITLAB, baseUrl: 'nope' })).toBe('baseUrl "nope": Invalid URL');
  });

  it('says a missing field is required, with the context given', () => {
    const { clientSecret: _s, ...noSecret } = GITLAB;
    expect(line(IdentityProviderConfig, noSecret)).toBe('clientSecret is required');
    expect(line(IdentityProviderConfig, { name: 'gl' })).toBe('type is required');
    expect(
      line(
        IdentityProviderConfig,
        { type: 'ldap', name: 'x', url: 'ldap://h' },
        {
          label: (path) => (path === 'userSearch' ? '--user-base-dn' : path),
          requiredContext: ' for --type ldap',
        },
      ),
    ).toBe('--user-base-dn is required for --type ldap');
  });

  it('says a missing literal or enum field is required, and a wrong one what it must be', () => {
    expect(line(TokenReviewRequest, { kind: 'TokenReview', spec: {} })).toBe('apiVersion is required');
    expect(line(TokenReviewRequest, { apiVersion: 'authentication.k8s.io/v1', kind: 'Pod', spec: {} })).toBe(
      'kind "Pod": must be TokenReview',
    );
  });

  it('lists unknown fields and the options of a discriminated union', () => {
    expect(line(IdentityProviderConfig, { ...GITLAB, bogus: 1, extra: 2 })).toBe(
      'input: unknown fields bogus, extra',
    );
    expect(line(IdentityProviderConfig, { ...GITLAB, type: 'saml' }, { label: (p) => p || 'body' })).toBe(
      'type "saml": must be one of oidc, github, gitlab, ldap',
    );
  });

  it('never quotes a secret, a blank text or a long one', () => {
    const long = line(
      IdentityProviderConfig,
      { ...GITLAB, clientSecret: 'x'.repeat(5000) },
      {
        secrets: IDENTITY_PROVIDER_SECRETS,
      },
    );
    expect(long).toBe('clientSecret: Too big: expected string to have <=4096 characters');
    expect(line(z.object({ scopes: z.array(z.string().min(1)) }), { scopes: ['a', ''] })).toBe(
      'scopes: Too small: expected string to have >=1 characters',
    );
    expect(line(z.string().trim().min(1, 'must not be empty'), '  ', { label: () => '--name' })).toBe(
      '--name: must not be empty',
    );
    expect(line(z.string().max(3), 'x'.repeat(101))).toBe(
      'input: Too big: expected string to have <=3 characters',
    );
    expect(line(z.int().min(100), 50, { label: () => '--timeout-ms' })).toBe(
      '--timeout-ms 50: Too small: expected number to be >=100',
    );
  });

  it('in terse form says only which field is missing or not valid', () => {
    const schema = z.object({ username: z.string().min(1), password: z.string() });
    const terse = { terse: true, label: (path: string) => path || 'request' };
    expect(line(schema, { username: 'a' }, terse)).toBe('password is required');
    expect(line(schema, { username: '', password: 'p' }, terse)).toBe('username is not valid');
    expect(line(schema, 'text', terse)).toBe('request is not valid');
  });

  it('without the input, words the issue without guessing what was missing', () => {
    const result = z.object({ a: z.string() }).safeParse({});
    expect(describeFirstIssue(result.error as z.ZodError)).toBe(
      'a: Invalid input: expected string, received undefined',
    );
    expect(describeFirstIssue({ issues: [] })).toBe('input is not valid');
  });
});
