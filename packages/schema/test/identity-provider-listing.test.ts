import { describe, expect, it } from 'vitest';
import {
  DEFAULT_OIDC_SCOPES,
  GitHubProviderConfig,
  GitLabProviderConfig,
  IDENTITY_PROVIDER_SECRETS,
  IdentityProvider,
  IdentityProviderPatch,
  LdapProviderConfig,
  LinkedIdentity,
  OidcProviderConfig,
} from '../src/index.js';
import { rejectedAt } from './rejected-at.js';

describe('IDENTITY_PROVIDER_SECRETS', () => {
  it('names the secret fields, each a field of some provider type', () => {
    expect(IDENTITY_PROVIDER_SECRETS).toEqual(['clientSecret', 'bindPassword']);
    const fields = [
      OidcProviderConfig,
      GitHubProviderConfig,
      GitLabProviderConfig,
      LdapProviderConfig,
    ].flatMap((schema) => Object.keys(schema.shape));
    for (const secret of IDENTITY_PROVIDER_SECRETS) expect(fields).toContain(secret);
  });
});

describe('IdentityProvider', () => {
  const listed = {
    name: 'gitlab',
    type: 'gitlab',
    source: 'database',
    config: { clientId: 'x', clientSecret: '[set]' },
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-02T00:00:00.000Z',
    etag: '"0123456789abcdef"',
  };

  it('accepts a listed provider, from the database or the configuration file', () => {
    expect(IdentityProvider.parse(listed)).toStrictEqual(listed);
    const fromFile = { ...listed, source: 'config', createdAt: null, updatedAt: null };
    expect(IdentityProvider.parse(fromFile)).toStrictEqual(fromFile);
  });

  it.each([
    [{ source: 'yaml' }, 'source'],
    [{ type: 'saml' }, 'type'],
    [{ config: [] }, 'config'],
    [{ createdAt: 'yesterday' }, 'createdAt'],
    [{ createdAt: undefined }, 'createdAt'],
    [{ updatedAt: 'today' }, 'updatedAt'],
    [{ etag: undefined }, 'etag'],
  ])('rejects %j at %s', (change, path) => {
    expect(rejectedAt(IdentityProvider, { ...listed, ...change })).toEqual([path]);
  });
});

describe('IdentityProviderPatch', () => {
  it('takes any object of fields (the merged configuration is what gets checked), nothing else', () => {
    const patch = { clientSecret: 'rotated', displayName: null, claims: { groups: 'roles' } };
    expect(IdentityProviderPatch.parse(patch)).toStrictEqual(patch);
    expect(rejectedAt(IdentityProviderPatch, ['displayName'])).toEqual(['']);
    expect(rejectedAt(IdentityProviderPatch, null)).toEqual(['']);
  });
});

describe('DEFAULT_OIDC_SCOPES', () => {
  it('asks for groups, and is what an OIDC provider gets without scopes', () => {
    expect(DEFAULT_OIDC_SCOPES).toEqual(['openid', 'profile', 'email', 'groups']);
    const config = OidcProviderConfig.parse({
      type: 'oidc',
      name: 'corp',
      issuer: 'https://sso.example.com',
      clientId: 'x',
      clientSecret: 's',
    });
    expect(config.scopes).toEqual([...DEFAULT_OIDC_SCOPES]);
  });
});

describe('LinkedIdentity', () => {
  const linked = {
    provider: 'github',
    subject: '583231',
    userId: 'u1',
    username: 'octocat',
    email: null,
    groups: ['github:acme'],
    linkedAt: '2026-01-01T00:00:00.000Z',
    lastLoginAt: null,
  };

  it('accepts a linked identity, signed in or not', () => {
    expect(LinkedIdentity.parse(linked)).toStrictEqual(linked);
    const signedIn = { ...linked, email: 'o@example.com', lastLoginAt: '2026-01-02T00:00:00+02:00' };
    expect(LinkedIdentity.parse(signedIn)).toStrictEqual(signedIn);
  });

  it.each([
    [{ subject: 583231 }, 'subject'],
    [{ email: undefined }, 'email'],
    [{ groups: 'github:acme' }, 'groups'],
    [{ linkedAt: null }, 'linkedAt'],
    [{ lastLoginAt: '2026-01-02' }, 'lastLoginAt'],
  ])('rejects %j at %s', (change, path) => {
    expect(rejectedAt(LinkedIdentity, { ...linked, ...change })).toEqual([path]);
  });
});
