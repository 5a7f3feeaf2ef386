import { describe, expect, it } from 'vitest';
import {
  ApplyDeclarationsInput,
  ApplyResult,
  DECLARED_SECRET_FIELDS,
  DeclarationManager,
  Declarations,
  DeclaredApiKey,
  DeclaredClient,
  DeclaredCluster,
  DeclaredGroup,
  DeclaredIdentityProvider,
  DeclaredKind,
  DeclaredTrust,
  DeclaredUser,
  PlannedChange,
  PlannedField,
  SecretReference,
} from '../src/index.js';

const issue = (result: {
  success: boolean;
  error?: { issues: { path: PropertyKey[]; message: string }[] };
}) => result.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)[0];

describe('declarations (idgate apply)', () => {
  it('takes secrets only by reference, never the secret itself', () => {
    expect(SecretReference.parse({ env: 'WEB_SECRET' })).toEqual({ env: 'WEB_SECRET' });
    expect(SecretReference.parse({ file: '/run/secrets/web' })).toEqual({ file: '/run/secrets/web' });
    for (const bad of ['hunter2', { env: '1BAD' }, { file: '' }, { env: 'A', file: 'b' }, { value: 'x' }])
      expect(SecretReference.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    expect(issue(SecretReference.safeParse('hunter2'))).toMatch(/never goes in the file itself/);
    expect(DECLARED_SECRET_FIELDS).toEqual(
      expect.arrayContaining(['secret', 'key', 'password', 'clientSecret']),
    );
  });

  it('declares a confidential client with its secret, a public one without', () => {
    const web = DeclaredClient.parse({ clientId: 'web', name: 'Web', secret: { env: 'S' } });
    expect(web).toMatchObject({ clientId: 'web', public: false, redirectUris: [], secret: { env: 'S' } });
    expect(DeclaredClient.parse({ clientId: 'spa', name: 'SPA', public: true }).public).toBe(true);
    expect(issue(DeclaredClient.safeParse({ clientId: 'web', name: 'Web' }))).toMatch(
      /^secret: a confidential client needs/,
    );
    expect(
      issue(DeclaredClient.safeParse({ clientId: 'spa', name: 'S', public: true, secret: { env: 'S' } })),
    ).toBe('secret: a public client has no secret');
    expect(issue(DeclaredClient.safeParse({ clientId: 'has space', name: 'W', public: true }))).toMatch(
      /^clientId:/,
    );
  });

  it('declares clusters, groups, users, identity providers and API keys', () => {
    expect(DeclaredCluster.parse({ name: 'Prod' })).toEqual({ name: 'prod', requireMfa: false });
    expect(DeclaredCluster.parse({ name: 'prod', requireMfa: true }).requireMfa).toBe(true);
    expect(DeclaredGroup.parse({ name: 'sre' })).toEqual({ name: 'sre' });
    expect(DeclaredGroup.safeParse({ name: 'system:masters' }).success).toBe(false);
    expect(DeclaredUser.parse({ username: 'alice' })).toEqual({
      username: 'alice',
      email: null,
      displayName: null,
      groups: [],
      disabled: false,
    });
    expect(
      DeclaredIdentityProvider.parse({
        name: 'corp',
        type: 'oidc',
        issuer: 'https://x',
        clientSecret: { env: 'C' },
      }),
    ).toMatchObject({
      issuer: 'https://x',
    });
    expect(
      DeclaredIdentityProvider.safeParse({ name: 'corp', type: 'oidc', clientSecret: 'inline' }).success,
    ).toBe(false);
    expect(
      DeclaredApiKey.parse({ name: 'hook', scopes: ['tokenreview'], cluster: 'prod', key: { file: '/k' } }),
    ).toMatchObject({
      cluster: 'prod',
    });
    expect(issue(DeclaredApiKey.safeParse({ name: 'hook', key: { file: '/k' } }))).toBe(
      'scopes: give at least one scope or role',
    );
    expect(issue(DeclaredApiKey.safeParse({ name: 'hook', roles: ['admin'] }))).toMatch(/^key:/);
    const gha = { name: 'gha', issuer: 'https://token.actions.githubusercontent.com', audience: 'idgate' };
    expect(
      DeclaredTrust.parse({ ...gha, username: 'ci:{repository}', clusters: ['prod'], maxTtl: 900 }),
    ).toMatchObject({
      groups: [],
    });
    expect(
      issue(DeclaredTrust.safeParse({ ...gha, username: 'ci:{repository}', clusters: [], maxTtl: 900 })),
    ).toBe('clusters: must name at least one cluster');
  });

  it('holds lists of each kind, refusing an unknown one', () => {
    expect(Declarations.parse({})).toEqual({
      clients: [],
      clusters: [],
      groups: [],
      users: [],
      identityProviders: [],
      trusts: [],
      apiKeys: [],
    });
    expect(Declarations.safeParse({ cluster: [] }).success).toBe(false);
    expect(DeclaredKind.options).toEqual([
      'identity-provider',
      'client',
      'cluster',
      'trust',
      'group',
      'user',
      'api-key',
    ]);
  });

  it('applies with a manager, dry run and prune; answers a plan', () => {
    expect(ApplyDeclarationsInput.parse({ declarations: {} })).toMatchObject({
      dryRun: false,
      prune: false,
      manager: 'apply',
    });
    expect(DeclarationManager.safeParse('Team B').success).toBe(false);
    expect(DeclarationManager.parse('team-b')).toBe('team-b');
    const field = PlannedField.parse({ field: 'email', before: 'a@x', after: 'b@x' });
    const change = PlannedChange.parse({
      kind: 'user',
      name: 'alice',
      action: 'update',
      drift: true,
      adopted: false,
      fields: [field],
    });
    expect(
      ApplyResult.parse({
        manager: 'apply',
        dryRun: true,
        changes: [change],
        summary: { create: 0, update: 1, delete: 0, unchanged: 0, drift: 1 },
      }).changes[0]?.drift,
    ).toBe(true);
    expect(PlannedChange.safeParse({ ...change, action: 'replace' }).success).toBe(false);
  });
});
