import { describe, expect, it } from 'vitest';
import {
  GitHubProviderConfig,
  GitLabProviderConfig,
  IdentityProviderConfig,
  IdentityProviderName,
  LdapProviderConfig,
  MappingMethod,
  OidcClaimNames,
  OidcProviderConfig,
} from '../src/index.js';
import { rejectedAt } from './rejected-at.js';

const COMMON_DEFAULTS = { mapping: 'auto', linkByVerifiedEmail: false, disabled: false };
const oidc = {
  type: 'oidc',
  name: 'corp',
  issuer: 'https://sso.example.com',
  clientId: 'idgate',
  clientSecret: 's',
};
const github = { type: 'github', name: 'github', clientId: 'Iv1.x', clientSecret: 's' };
const gitlab = { type: 'gitlab', name: 'gitlab', clientId: 'x', clientSecret: 's' };
const ldap = {
  type: 'ldap',
  name: 'corp-ldap',
  url: 'ldaps://ldap.example.com',
  userSearch: { baseDn: 'dc=example' },
};

describe('IdentityProviderName', () => {
  it.each(['a', 'corp-sso', 'github2', 'a-', `a${'b'.repeat(62)}`])('accepts %j', (name) => {
    expect(IdentityProviderName.parse(name)).toBe(name);
  });

  it.each([
    '',
    'GitHub',
    'Corp',
    '1corp',
    '-corp',
    'corp_sso',
    'corp sso',
    'corp.sso',
    'jürgen',
    'a'.repeat(64),
  ])('rejects %j', (name) => {
    expect([...new Set(rejectedAt(IdentityProviderName, name))]).toEqual(['']);
  });

  it('says what a name must look like', () => {
    expect(IdentityProviderName.safeParse('GitHub').error?.issues[0]?.message).toBe(
      'must be lower-case letters, digits and -, starting with a letter',
    );
  });
});

describe('MappingMethod', () => {
  it('accepts auto, lookup and manual only', () => {
    for (const method of ['auto', 'lookup', 'manual']) expect(MappingMethod.parse(method)).toBe(method);
    expect(rejectedAt(MappingMethod, 'create')).toEqual(['']);
    expect(rejectedAt(MappingMethod, 'AUTO')).toEqual(['']);
  });
});

describe('OidcProviderConfig', () => {
  it('fills the defaults', () => {
    expect(OidcProviderConfig.parse(oidc)).toStrictEqual({
      ...oidc,
      ...COMMON_DEFAULTS,
      scopes: ['openid', 'profile', 'email', 'groups'],
      claims: { username: 'preferred_username', email: 'email', groups: 'groups', name: 'name' },
      useUserinfo: false,
      trustUpstreamMfa: [],
      trustEmailVerified: false,
    });
  });

  it('takes trustEmailVerified: a boolean, off unless set', () => {
    expect(OidcProviderConfig.parse({ ...oidc, trustEmailVerified: true }).trustEmailVerified).toBe(true);
    expect(OidcProviderConfig.safeParse({ ...oidc, trustEmailVerified: 'yes' }).success).toBe(false);
  });

  it('takes trustUpstreamMfa: amr and acr values, printable, bounded', () => {
    const values = ['mfa', 'hwk', 'urn:corp:acr:strong'];
    expect(OidcProviderConfig.parse({ ...oidc, trustUpstreamMfa: values }).trustUpstreamMfa).toEqual(values);
    for (const bad of [[''], ['two words'], ['x'.repeat(257)], Array.from({ length: 33 }, (_, i) => `v${i}`)])
      expect(OidcProviderConfig.safeParse({ ...oidc, trustUpstreamMfa: bad }).success).toBe(false);
  });

  it('keeps what is given, claim names merged with the defaults', () => {
    const parsed = OidcProviderConfig.parse({
      ...oidc,
      displayName: 'Corporate SSO',
      mapping: 'lookup',
      linkByVerifiedEmail: true,
      tokenClientId: 'kubectl',
      groupsPrefix: '',
      scopes: ['openid', 'groups'],
      claims: { username: 'upn' },
      useUserinfo: true,
    });
    expect(parsed).toMatchObject({
      displayName: 'Corporate SSO',
      mapping: 'lookup',
      linkByVerifiedEmail: true,
      tokenClientId: 'kubectl',
      groupsPrefix: '',
      scopes: ['openid', 'groups'],
      claims: { username: 'upn', email: 'email', groups: 'groups', name: 'name' },
      useUserinfo: true,
    });
    expect(OidcClaimNames.parse({})).toStrictEqual({
      username: 'preferred_username',
      email: 'email',
      groups: 'groups',
      name: 'name',
    });
  });

  it.each([
    [{ issuer: 'ftp://sso.example.com' }, 'issuer'],
    [{ issuer: 'sso.example.com' }, 'issuer'],
    [{ issuer: undefined }, 'issuer'],
    [{ clientId: '' }, 'clientId'],
    [{ clientSecret: undefined }, 'clientSecret'],
    [{ clientSecret: '' }, 'clientSecret'],
    [{ clientSecret: 'x'.repeat(4097) }, 'clientSecret'],
    [{ scopes: ['openid', ''] }, 'scopes.1'],
    [{ claims: { username: '' } }, 'claims.username'],
    [{ displayName: '' }, 'displayName'],
    [{ displayName: 'x'.repeat(129) }, 'displayName'],
    [{ groupsPrefix: 'x'.repeat(65) }, 'groupsPrefix'],
    [{ mapping: 'create' }, 'mapping'],
    [{ name: 'Corp' }, 'name'],
  ])('rejects %j at %s', (change, path) => {
    expect(rejectedAt(OidcProviderConfig, { ...oidc, ...change })).toEqual([path]);
  });

  it('refuses unknown keys, at the top and in claims', () => {
    expect(rejectedAt(OidcProviderConfig, { ...oidc, clientSecretFile: '/s' })).toEqual(['']);
    expect(rejectedAt(OidcProviderConfig, { ...oidc, claims: { picture: 'picture' } })).toEqual(['claims']);
  });
});

describe('GitHubProviderConfig', () => {
  it('fills the defaults for github.com', () => {
    expect(GitHubProviderConfig.parse(github)).toStrictEqual({
      ...github,
      ...COMMON_DEFAULTS,
      baseUrl: 'https://github.com',
      apiUrl: 'https://api.github.com',
      allowedOrganizations: [],
      loadTeams: true,
      trustEmailVerified: false,
    });
  });

  it('takes a GitHub Enterprise host, organizations and no teams', () => {
    const enterprise = {
      ...github,
      baseUrl: 'https://github.example.com',
      apiUrl: 'https://github.example.com/api/v3',
      allowedOrganizations: ['acme'],
      loadTeams: false,
      trustEmailVerified: false,
    };
    expect(GitHubProviderConfig.parse(enterprise)).toStrictEqual({ ...enterprise, ...COMMON_DEFAULTS });
  });

  it.each([
    [{ baseUrl: 'github.com' }, 'baseUrl'],
    [{ apiUrl: 'ssh://api.github.com' }, 'apiUrl'],
    [{ allowedOrganizations: [''] }, 'allowedOrganizations.0'],
    [{ loadTeams: 'no' }, 'loadTeams'],
    [{ clientSecret: undefined }, 'clientSecret'],
  ])('rejects %j at %s', (change, path) => {
    expect(rejectedAt(GitHubProviderConfig, { ...github, ...change })).toEqual([path]);
  });

  it('refuses keys of another type', () => {
    expect(rejectedAt(GitHubProviderConfig, { ...github, issuer: 'https://github.com' })).toEqual(['']);
  });
});

describe('GitLabProviderConfig', () => {
  it('fills the defaults for gitlab.com', () => {
    expect(GitLabProviderConfig.parse(gitlab)).toStrictEqual({
      ...gitlab,
      ...COMMON_DEFAULTS,
      baseUrl: 'https://gitlab.com',
      allowedGroups: [],
      trustEmailVerified: false,
    });
  });

  it.each([
    [{ baseUrl: 'gitlab.example.com' }, 'baseUrl'],
    [{ allowedGroups: 'acme' }, 'allowedGroups'],
    [{ clientId: undefined }, 'clientId'],
  ])('rejects %j at %s', (change, path) => {
    expect(rejectedAt(GitLabProviderConfig, { ...gitlab, ...change })).toEqual([path]);
  });

  it('refuses keys of another type', () => {
    expect(rejectedAt(GitLabProviderConfig, { ...gitlab, allowedOrganizations: ['acme'] })).toEqual(['']);
  });
});

describe('LdapProviderConfig', () => {
  it('fills the defaults, groupSearch staying absent', () => {
    expect(LdapProviderConfig.parse(ldap)).toStrictEqual({
      ...ldap,
      ...COMMON_DEFAULTS,
      startTls: false,
      timeoutMs: 5000,
      userSearch: {
        baseDn: 'dc=example',
        filter: '(uid={username})',
        scope: 'sub',
        usernameAttribute: 'uid',
        emailAttribute: 'mail',
        nameAttribute: 'cn',
        idAttribute: 'entryUUID',
      },
    });
  });

  it('fills the defaults of a group search', () => {
    const parsed = LdapProviderConfig.parse({ ...ldap, groupSearch: { baseDn: 'ou=groups,dc=example' } });
    expect(parsed.groupSearch).toStrictEqual({
      baseDn: 'ou=groups,dc=example',
      filter: '(member={dn})',
      scope: 'sub',
      nameAttribute: 'cn',
    });
  });

  it('takes a manager bind with its password', () => {
    const parsed = LdapProviderConfig.parse({ ...ldap, bindDn: 'cn=admin,dc=example', bindPassword: 'pw' });
    expect(parsed).toMatchObject({ bindDn: 'cn=admin,dc=example', bindPassword: 'pw' });
  });

  it.each([
    'ldap://ldap.example.com',
    'ldaps://ldap.example.com',
    'ldap://ldap.example.com:389',
    'ldaps://10.0.0.7:636/',
  ])('accepts the url %j', (url) => {
    expect(LdapProviderConfig.parse({ ...ldap, url }).url).toBe(url);
  });

  it.each([
    'http://ldap.example.com',
    'ldap://',
    'ldap:/ldap.example.com',
    'LDAP://ldap.example.com',
    'ldap://ldap.example.com/dc=example',
    'ldap://ldap example.com',
    'ldap.example.com',
  ])('rejects the url %j', (url) => {
    const result = LdapProviderConfig.safeParse({ ...ldap, url });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['url', 'must be ldap://host[:port] or ldaps://host[:port]'],
    ]);
  });

  it.each([
    [{ timeoutMs: 99 }, 'timeoutMs'],
    [{ timeoutMs: 60_001 }, 'timeoutMs'],
    [{ timeoutMs: 1000.5 }, 'timeoutMs'],
    [{ startTls: 'yes' }, 'startTls'],
    [{ bindPassword: '' }, 'bindPassword'],
    [{ caCertificate: '' }, 'caCertificate'],
    [{ userSearch: undefined }, 'userSearch'],
    [{ userSearch: {} }, 'userSearch.baseDn'],
    [{ userSearch: { baseDn: 'dc=example', scope: 'subtree' } }, 'userSearch.scope'],
    [{ groupSearch: { filter: '(member={dn})' } }, 'groupSearch.baseDn'],
  ])('rejects %j at %s', (change, path) => {
    expect(rejectedAt(LdapProviderConfig, { ...ldap, ...change })).toEqual([path]);
  });

  it('refuses unknown keys, nested ones too', () => {
    expect(rejectedAt(LdapProviderConfig, { ...ldap, clientSecret: 's' })).toEqual(['']);
    expect(rejectedAt(LdapProviderConfig, { ...ldap, userSearch: { baseDn: 'dc=x', attrs: [] } })).toEqual([
      'userSearch',
    ]);
    expect(rejectedAt(LdapProviderConfig, { ...ldap, groupSearch: { baseDn: 'dc=x', member: 'm' } })).toEqual(
      ['groupSearch'],
    );
  });
});

describe('IdentityProviderConfig', () => {
  it.each([oidc, github, gitlab, ldap])('parses a %s provider by its type', (input) => {
    expect(IdentityProviderConfig.parse(input)).toMatchObject({ ...input, ...COMMON_DEFAULTS });
  });

  it.each([{ ...github, type: 'bitbucket' }, { ...github, type: undefined }, 'github', null])(
    'rejects %j at type',
    (input) => {
      expect(rejectedAt(IdentityProviderConfig, input)).toEqual(
        typeof input === 'object' && input !== null ? ['type'] : [''],
      );
    },
  );

  it('checks against the shape of the type it names', () => {
    expect(rejectedAt(IdentityProviderConfig, { ...oidc, type: 'github' })).toEqual(['']);
    expect(rejectedAt(IdentityProviderConfig, { ...ldap, type: 'oidc' })).toContain('issuer');
  });
});

describe('LDAP URL', () => {
  it.each(['ldap://127.0.0.1:389', 'ldaps://ldap.example.com', 'ldap://[::1]:10389/'])(
    'accepts %s',
    (url) => {
      expect(
        LdapProviderConfig.safeParse({ type: 'ldap', name: 'x', url, userSearch: { baseDn: 'dc=x' } })
          .success,
      ).toBe(true);
    },
  );
  it.each(['ldap://host:port', 'ldap://user@host', 'ldap://host:123456', 'http://host', 'ldap://host/dc=x'])(
    'refuses %s',
    (url) => {
      expect(
        LdapProviderConfig.safeParse({ type: 'ldap', name: 'x', url, userSearch: { baseDn: 'dc=x' } })
          .success,
      ).toBe(false);
    },
  );
});
