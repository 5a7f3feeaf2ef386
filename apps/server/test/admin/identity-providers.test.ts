import { openProviderConfig } from '@idgate/core/admin';
import type { IdentityProviderConfigInput } from '@idgate/schema';
import {
  createIdgateAdminClient,
  createIdgateClient,
  type IdgateAdminClient,
  type IdgateClient,
} from '@idgate/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { httpError } from '../helpers/http-error.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startUpstreamOidc, type UpstreamOidc } from '../helpers/upstream-oidc.js';
import { UserAgent } from '../helpers/user-agent.js';

const BASE = '/admin/v1/identity-providers';

const PROVIDERS = {
  oidc: {
    type: 'oidc',
    name: 'corp-sso',
    issuer: 'https://sso.example.com',
    clientId: 'idgate',
    clientSecret: 'oidc-plain-secret',
  },
  github: { type: 'github', name: 'github', clientId: 'Iv1.x', clientSecret: 'github-plain-secret' },
  gitlab: { type: 'gitlab', name: 'gitlab', clientId: 'gl', clientSecret: 'gitlab-plain-secret' },
  ldap: {
    type: 'ldap',
    name: 'corp-ldap',
    url: 'ldaps://ldap.example.com',
    bindDn: 'cn=reader,dc=example,dc=com',
    bindPassword: 'ldap-plain-password',
    userSearch: { baseDn: 'ou=people,dc=example,dc=com' },
  },
} satisfies Record<string, IdentityProviderConfigInput>;
const PLAIN_SECRETS = [
  'oidc-plain-secret',
  'github-plain-secret',
  'gitlab-plain-secret',
  'ldap-plain-password',
];

/** The error a promise rejects with, checked to be an IdgateHttpError. */
describe.each(testDatabaseUrls())('admin identity provider API on $name', (kind) => {
  let t: TestServer;
  let apiKey: string;
  let client: IdgateAdminClient;
  let idgate: IdgateClient;
  const raw = (path: string, init: RequestInit = {}) =>
    fetch(`${t.baseUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${apiKey}`, ...init.headers },
    });
  const postJson = (body: string, type = 'application/json') =>
    raw(BASE, { method: 'POST', headers: { 'content-type': type }, body });

  beforeAll(async () => {
    t = await startTestServer(kind);
    apiKey = await t.addApiKey(['admin']);
    client = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey });
    idgate = createIdgateClient({ baseUrl: t.baseUrl });
  });
  afterAll(async () => t?.close());

  it('creates each provider type and lists them, never showing a secret, storing them sealed', async () => {
    for (const config of [PROVIDERS.oidc, PROVIDERS.github, PROVIDERS.ldap]) {
      const created = await client.createIdentityProvider(config);
      expect(created).toMatchObject({ name: config.name, type: config.type, source: 'database' });
    }
    const response = await postJson(JSON.stringify(PROVIDERS.gitlab));
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`${t.baseUrl}${BASE}/gitlab`);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const gitlab = (await response.json()) as { config: Record<string, unknown> };
    expect(gitlab.config).toMatchObject({ clientSecret: '[set]', baseUrl: 'https://gitlab.com' });

    const { items } = await client.listIdentityProviders();
    expect(items.map((p) => [p.name, p.type, p.source])).toEqual([
      ['corp-ldap', 'ldap', 'database'],
      ['corp-sso', 'oidc', 'database'],
      ['github', 'github', 'database'],
      ['gitlab', 'gitlab', 'database'],
    ]);
    expect(items.find((p) => p.type === 'ldap')?.config.bindPassword).toBe('[set]');
    const shown = JSON.stringify([items, await client.getIdentityProvider('corp-sso'), gitlab]);
    for (const secret of PLAIN_SECRETS) expect(shown).not.toContain(secret);

    for (const [name, field, plain] of [
      ['corp-sso', 'clientSecret', 'oidc-plain-secret'],
      ['corp-ldap', 'bindPassword', 'ldap-plain-password'],
    ] as const) {
      const stored = await t.server.services.storage.identityProviders.findByName(name);
      const sealed = stored?.config[field];
      expect(typeof sealed).toBe('string');
      expect(sealed).not.toContain(plain);
    }
  });

  it('answers 409 for a name taken in any case, and 400 naming the first bad field', async () => {
    const taken = await httpError(client.createIdentityProvider({ ...PROVIDERS.github, name: 'GitHub' }));
    expect([taken.status, taken.problem?.code]).toEqual([409, 'identity_provider_exists']);
    expect(taken.headers.get('content-type')).toMatch(/^application\/problem\+json/);

    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...PROVIDERS.oidc, name: 'other', issuer: 'not a url' }, 'issuer'],
      [{ type: 'github', name: 'gh2', clientId: 'x' }, 'clientSecret is required'],
      [{ ...PROVIDERS.gitlab, name: 'gl2', bogus: 1 }, 'body: unknown field bogus'],
      [
        { ...PROVIDERS.gitlab, name: 'gl2', type: 'saml' },
        'type "saml": must be one of oidc, github, gitlab, ldap',
      ],
      [{ ...PROVIDERS.gitlab, name: '9lives' }, 'name'],
      [{ ...PROVIDERS.ldap, name: 'ldap2', userSearch: {} }, 'userSearch.baseDn is required'],
      [{ ...PROVIDERS.oidc, name: 'oidc2', trustUpstreamMfa: ['two words'] }, 'trustUpstreamMfa'],
      [{ ...PROVIDERS.github, name: 'gh2', trustUpstreamMfa: ['mfa'] }, 'unknown field trustUpstreamMfa'],
    ];
    for (const [body, detail] of cases) {
      const error = await httpError(client.createIdentityProvider(body as IdentityProviderConfigInput));
      expect([error.status, error.problem?.code]).toEqual([400, 'invalid_identity_provider']);
      expect(error.problem?.detail).toContain(detail);
    }
  });

  it('answers 404 for an unknown provider or user', async () => {
    for (const call of [
      () => client.getIdentityProvider('nope'),
      () => client.setIdentityProviderDisabled('nope', true),
      () => client.deleteIdentityProvider('nope'),
    ]) {
      const error = await httpError(call());
      expect([error.status, error.problem?.code]).toEqual([404, 'identity_provider_not_found']);
    }
    const user = await httpError(client.listUserIdentities('nobody'));
    expect([user.status, user.problem?.code]).toEqual([404, 'user_not_found']);
  });

  it('disables and enables a provider', async () => {
    const disabled = await client.setIdentityProviderDisabled('github', true);
    expect(disabled.config.disabled).toBe(true);
    expect((await t.server.services.storage.identityProviders.findByName('github'))?.disabled).toBe(true);
    expect((await client.getIdentityProvider('GITHUB')).config.disabled).toBe(true);
    const refused = await httpError(idgate.callback('github', { code: 'c', state: 's' }));
    expect([refused.status, refused.oauthError?.error]).toEqual([400, 'access_denied']);
    expect((await client.setIdentityProviderDisabled('github', false)).config.disabled).toBe(false);
  });

  it('answers the callback of an unknown provider 404, and a bad state 400 invalid_request', async () => {
    const unknown = await httpError(idgate.callback('nope', { code: 'c', state: 's' }));
    expect(unknown.status).toBe(404);
    expect(unknown.oauthError).toMatchObject({ error: 'invalid_request' });
    const badState = await httpError(idgate.callback('github', { code: 'c', state: 'not-a-state' }));
    expect(badState.status).toBe(400);
    expect(badState.oauthError?.error).toBe('invalid_request');
  });

  it("deletes a provider with the identities linked through it, as the user's listing shows", async () => {
    const userId = await t.addUser('alice', 'a long password');
    const { identities } = t.server.services.storage;
    const linked = { userId, email: null, groups: ['gitlab:dev'], linkedAt: new Date(), lastLoginAt: null };
    await identities.link({ ...linked, provider: 'gitlab', subject: '42', username: 'alice-gl' });
    await identities.link({ ...linked, provider: 'github', subject: '7', username: 'alice-gh' });
    const before = await client.listUserIdentities('alice');
    expect(before.items.map((i) => [i.provider, i.subject, i.username])).toEqual([
      ['github', '7', 'alice-gh'],
      ['gitlab', '42', 'alice-gl'],
    ]);
    await client.deleteIdentityProvider('gitlab');
    expect((await client.listUserIdentities('alice')).items.map((i) => i.provider)).toEqual(['github']);
    expect(await identities.find('gitlab', '42')).toBeUndefined();
    expect((await httpError(client.getIdentityProvider('gitlab'))).status).toBe(404);
  });

  it('changes a provider with PATCH: merged, ETag and If-Match, a rotated secret sealed and never shown', async () => {
    const created = await client.createIdentityProvider({
      ...PROVIDERS.oidc,
      name: 'patchable',
      displayName: 'Patchable',
      claims: { groups: 'roles' },
    });
    expect(created.config.scopes).toEqual(['openid', 'profile', 'email', 'groups']);
    const read = await raw(`${BASE}/patchable`);
    expect(read.headers.get('etag')).toBe(created.etag);

    const patch = {
      clientSecret: 'rotated-plain-secret',
      issuer: 'https://sso2.example.com',
      claims: { username: 'email' },
      displayName: null,
      name: 'patchable',
    };
    const updated = await client.updateIdentityProvider('Patchable', patch, { ifMatch: created.etag });
    expect(updated).toMatchObject({ name: 'patchable', type: 'oidc', createdAt: created.createdAt });
    expect(updated.etag).not.toBe(created.etag);
    expect(updated.config).toMatchObject({
      issuer: 'https://sso2.example.com',
      clientSecret: '[set]',
      claims: { username: 'email', groups: 'roles', email: 'email', name: 'name' },
    });
    expect(updated.config.displayName).toBeUndefined();
    expect(JSON.stringify(updated)).not.toContain('rotated-plain-secret');
    const record = await t.server.services.storage.identityProviders.findByName('patchable');
    expect(JSON.stringify(record)).not.toContain('rotated-plain-secret');
    if (record === undefined) throw new Error('not stored');
    expect(await openProviderConfig(record, t.server.services.keyPolicy.secret)).toMatchObject({
      clientSecret: 'rotated-plain-secret',
    });

    const response = await raw(`${BASE}/patchable`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', 'if-match': updated.etag },
      body: JSON.stringify({ disabled: true }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const disabled = (await response.json()) as { etag: string; config: { disabled: boolean } };
    expect(response.headers.get('etag')).toBe(disabled.etag);
    expect(disabled.config.disabled).toBe(true);
    expect((await t.server.services.storage.identityProviders.findByName('patchable'))?.disabled).toBe(true);
  });

  it('takes trustUpstreamMfa on create and PATCH, and null puts it back to none', async () => {
    const created = await client.createIdentityProvider({
      ...PROVIDERS.oidc,
      name: 'mfa-trusting',
      trustUpstreamMfa: ['mfa', 'urn:corp:acr:strong'],
    });
    expect(created.config.trustUpstreamMfa).toEqual(['mfa', 'urn:corp:acr:strong']);
    const patched = await client.updateIdentityProvider('mfa-trusting', { trustUpstreamMfa: ['hwk'] });
    expect(patched.config.trustUpstreamMfa).toEqual(['hwk']);
    const cleared = await client.updateIdentityProvider('mfa-trusting', { trustUpstreamMfa: null });
    expect(cleared.config.trustUpstreamMfa).toEqual([]);
  });

  it('refuses a PATCH: 412 stale If-Match, 400 naming the field, 404 unknown, 415 not JSON', async () => {
    const current = await client.getIdentityProvider('patchable');
    const stale = await httpError(
      client.updateIdentityProvider('patchable', { displayName: 'x' }, { ifMatch: '"0000000000000000"' }),
    );
    expect([stale.status, stale.problem?.code]).toEqual([412, 'precondition_failed']);

    const cases: Array<[Record<string, unknown>, string]> = [
      [{ issuer: 'not a url' }, 'issuer "not a url"'],
      [{ name: 'renamed' }, 'name cannot be changed'],
      [{ type: 'github' }, 'type cannot be changed'],
      [{ clientSecret: null }, 'clientSecret is required'],
      [{ scopes: 'openid' }, 'scopes'],
      [{ bogus: true }, 'body: unknown field bogus'],
      [{ tokenClientId: 'no-such-client' }, 'tokenClientId "no-such-client": there is no such client'],
    ];
    for (const [patch, detail] of cases) {
      const error = await httpError(client.updateIdentityProvider('patchable', patch));
      expect([error.status, error.problem?.code]).toEqual([400, 'invalid_identity_provider']);
      expect(error.problem?.detail).toContain(detail);
    }
    const robot = await t.addClient({ grants: ['client_credentials'] });
    const machine = await httpError(
      client.updateIdentityProvider('patchable', { tokenClientId: robot.clientId }),
    );
    expect(machine.problem?.detail).toContain('none of the grant types users sign in with');
    for (const body of ['[]', '"x"']) {
      const response = await raw(`${BASE}/patchable`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { detail: string }).detail).toContain('must be a JSON object');
    }
    const text = await raw(`${BASE}/patchable`, {
      method: 'PATCH',
      headers: { 'content-type': 'text/plain' },
      body: 'displayName=x',
    });
    expect(text.status).toBe(415);
    const unknown = await httpError(client.updateIdentityProvider('nope', { displayName: 'x' }));
    expect([unknown.status, unknown.problem?.code]).toEqual([404, 'identity_provider_not_found']);
    expect((await client.getIdentityProvider('patchable')).etag).toBe(current.etag);
  });

  it('checks the token client when a provider is added: it must exist and take user sign-ins', async () => {
    const missing = await httpError(
      client.createIdentityProvider({ ...PROVIDERS.github, name: 'gh-tc', tokenClientId: 'nope' }),
    );
    expect([missing.status, missing.problem?.code]).toEqual([400, 'invalid_identity_provider']);
    expect(missing.problem?.detail).toBe(
      'tokenClientId "nope": there is no such client; name an existing client that users sign in to (e.g. kubectl\'s)',
    );
    const kubectl = await t.addClient({ grants: ['authorization_code'], trusted: true });
    const added = await client.createIdentityProvider({
      ...PROVIDERS.github,
      name: 'gh-tc',
      tokenClientId: kubectl.clientId,
    });
    expect(added.config.tokenClientId).toBe(kubectl.clientId);
    await client.deleteIdentityProvider('gh-tc');
  });

  it('answers 401 without a valid key and 403 without the admin scope', async () => {
    for (const authorization of [undefined, 'Bearer nonsense', `Bearer idg_aaaaaaaa_${'c'.repeat(43)}`]) {
      const response = await fetch(`${t.baseUrl}${BASE}`, {
        headers: authorization === undefined ? {} : { authorization },
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="idgate"/);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(response.headers.get('cache-control')).toBe('no-store');
    }
    const bare = await fetch(`${t.baseUrl}${BASE}`, { headers: { authorization: apiKey } });
    expect(bare.status).toBe(200);
    const reviewer = createIdgateAdminClient({
      baseUrl: t.baseUrl,
      apiKey: await t.addApiKey(['tokenreview']),
    });
    const forbidden = await httpError(reviewer.listIdentityProviders());
    expect([forbidden.status, forbidden.problem?.code]).toEqual([403, 'api_key_scope']);
    expect((await httpError(reviewer.deleteIdentityProvider('github'))).status).toBe(403);
    expect((await client.getIdentityProvider('github')).name).toBe('github');
  });

  it('answers bad bodies with problems: 415, malformed JSON, oversized', async () => {
    const body = JSON.stringify({ ...PROVIDERS.gitlab, name: 'gl3' });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const response = await postJson(type.endsWith('urlencoded') ? 'name=gl3&type=gitlab' : body, type);
      expect(response.status).toBe(415);
      expect(await response.json()).toMatchObject({ status: 415, code: 'unsupported_media_type' });
    }
    const malformed = await postJson('{"type": "gitlab",');
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await malformed.json()).toMatchObject({ code: 'invalid_body' });
    const oversized = await postJson(
      JSON.stringify({ ...PROVIDERS.gitlab, displayName: 'x'.repeat(70_000) }),
    );
    expect(oversized.status).toBe(413);
    expect(await oversized.json()).toMatchObject({ code: 'body_too_large' });
    expect((await httpError(client.getIdentityProvider('gl3'))).status).toBe(404);
  });

  it('documents the admin paths in the OpenAPI document', async () => {
    const document = (await (await fetch(`${t.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { tags: string[]; security: unknown }>>;
    };
    // Every route is in the document (test/http/openapi.test.ts walks the router): here, the
    // identity providers' paths in their order, and the user identities beside them.
    const admin = Object.keys(document.paths).filter((path) => path.startsWith('/admin/'));
    expect(admin.filter((path) => path.startsWith(BASE))).toEqual([
      BASE,
      `${BASE}/{name}`,
      `${BASE}/{name}/disable`,
      `${BASE}/{name}/enable`,
    ]);
    expect(admin).toContain('/admin/v1/users/{username}/identities');
    expect(document.paths[BASE]?.post).toMatchObject({
      tags: ['identity-providers'],
      security: [{ adminApiKey: ['identity-providers:write'] }],
    });
  });

  describe('with a provider declared in the configuration file', () => {
    let f: TestServer;
    let admin: IdgateAdminClient;
    beforeAll(async () => {
      f = await startTestServer(kind, {
        identityProviders: [
          { type: 'github', name: 'gh-file', clientId: 'x', clientSecret: 'y-file-secret' },
        ],
      });
      admin = createIdgateAdminClient({ baseUrl: f.baseUrl, apiKey: await f.addApiKey(['admin']) });
    });
    afterAll(async () => f?.close());

    it('lists it with source config, first, and keeps it read-only', async () => {
      await admin.createIdentityProvider({ ...PROVIDERS.gitlab });
      const { items } = await admin.listIdentityProviders();
      expect(items.map((p) => [p.name, p.source, p.createdAt === null])).toEqual([
        ['gh-file', 'config', true],
        ['gitlab', 'database', false],
      ]);
      expect(items[0]?.config.clientSecret).toBe('[set]');
      expect(JSON.stringify(items)).not.toContain('y-file-secret');
      expect((await admin.getIdentityProvider('GH-FILE')).source).toBe('config');
      for (const call of [
        () => admin.setIdentityProviderDisabled('gh-file', true),
        () => admin.setIdentityProviderDisabled('gh-file', false),
        () => admin.deleteIdentityProvider('gh-file'),
        () => admin.updateIdentityProvider('GH-File', { displayName: 'x' }),
      ]) {
        const error = await httpError(call());
        expect([error.status, error.problem?.code]).toEqual([409, 'identity_provider_read_only']);
      }
      const taken = await httpError(admin.createIdentityProvider({ ...PROVIDERS.github, name: 'GH-File' }));
      expect([taken.status, taken.problem?.code]).toEqual([409, 'identity_provider_exists']);
    });
  });
});

describe.each(testDatabaseUrls())('rotating an upstream client secret with PATCH on $name', (kind) => {
  let t: TestServer;
  let upstream: UpstreamOidc;
  let admin: IdgateAdminClient;

  beforeAll(async () => {
    t = await startTestServer(kind);
    upstream = await startUpstreamOidc({ redirectUris: [`${t.issuer}/callback/corp`] });
    upstream.accounts.set('u-100', { sub: 'u-100', preferred_username: 'alice', groups: ['dev'] });
    upstream.nextAccount = 'u-100';
    admin = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: await t.addApiKey(['admin']) });
  });
  afterAll(async () => {
    await upstream?.stop();
    await t?.close();
  });

  /** Follows /oauth/login/corp through the upstream and back; returns idgate's callback answer. */
  async function signInThroughUpstream(): Promise<Response> {
    const agent = new UserAgent();
    const start = `${t.issuer}/login/corp`;
    let response = await agent.request(start);
    for (let hop = 0; hop < 12; hop++) {
      const location = response.headers.get('location');
      if (location === null) return response;
      const next = new URL(location, response.url || start);
      if (next.toString().startsWith(`${t.issuer}/callback/`)) return agent.request(next);
      response = await agent.request(next);
    }
    throw new Error('too many redirects');
  }

  it('signs a user linked before the rotation in after it, as the same user', async () => {
    const tokenClient = await t.addClient({
      grants: ['authorization_code'],
      trusted: true,
      scopes: ['openid'],
    });
    const created = await admin.createIdentityProvider({
      type: 'oidc',
      name: 'corp',
      issuer: upstream.issuer,
      clientId: upstream.clientId,
      clientSecret: upstream.clientSecret,
      tokenClientId: tokenClient.clientId,
    });
    expect((await signInThroughUpstream()).status).toBe(200);
    const { identities, users } = t.server.services.storage;
    const linked = await identities.find('corp', 'u-100');
    expect(linked?.username).toBe('alice');
    const before = (await users.list()).length;

    // A secret the upstream does not know: the next sign-in uses it, and fails at the code exchange.
    const wrong = await admin.updateIdentityProvider(
      'corp',
      { clientSecret: 'not-the-upstream-secret-0123456789' },
      { ifMatch: created.etag },
    );
    const refused = await signInThroughUpstream();
    expect(refused.status).not.toBe(200);
    expect(await refused.text()).not.toContain('access_token');

    await admin.updateIdentityProvider(
      'corp',
      { clientSecret: upstream.clientSecret },
      { ifMatch: wrong.etag },
    );
    const response = await signInThroughUpstream();
    expect(response.status).toBe(200);
    expect(((await response.json()) as { access_token?: string }).access_token).toEqual(expect.any(String));
    expect((await identities.find('corp', 'u-100'))?.userId).toBe(linked?.userId);
    expect((await users.list()).length).toBe(before);
  });

  it('refuses a sign-in that would answer tokens before going upstream when no token client is set', async () => {
    await admin.updateIdentityProvider('corp', { tokenClientId: null });
    const response = await new UserAgent().request(`${t.issuer}/login/corp`);
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(await response.text()).toContain('browser sign-in only');
  });
});
