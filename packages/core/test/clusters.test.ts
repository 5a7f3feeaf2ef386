import { DEVICE_CODE_GRANT_TYPE } from '@idgate/schema';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  addCluster,
  getCluster,
  issueClusterApiKey,
  listClusters,
  removeCluster,
} from '../src/admin/clusters.js';
import { AdminError } from '../src/admin/errors.js';
import { authenticateApiKey } from '../src/api-keys/api-key.js';
import { issueAuthorizationCode } from '../src/authorize/flow.js';
import { computeCodeChallenge } from '../src/authorize/pkce.js';
import {
  type AuthorizationError,
  type AuthorizationRequest,
  matchesLoopbackRedirect,
  validateAuthorizationRequest,
} from '../src/authorize/request.js';
import { clusterAuthenticationConfiguration, webhookKubeconfig } from '../src/clusters/kubernetes.js';
import type { OAuthProtocolError } from '../src/errors.js';
import type { TokenEndpointContext } from '../src/grants/context.js';
import { handleTokenRequest } from '../src/grants/token-endpoint.js';
import {
  reviewToken,
  TOKEN_REVIEW_DENIAL_MESSAGES,
  type TokenReviewContext,
} from '../src/token-review/review.js';
import { issueAccessToken } from '../src/tokens/access-token.js';
import { adminPorts, rejection, thrown } from './admin/ports.js';
import { client, ISSUER, keyRing, manualClock, seededStorage } from './helpers.js';

const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

describe('RFC 8252 §7.3 loopback redirect URIs', () => {
  const native = client({
    public: true,
    trusted: false,
    grantTypes: ['authorization_code'],
    redirectUris: [
      'http://127.0.0.1/callback',
      'http://[::1]/callback',
      'http://localhost/cb',
      'https://app.example/cb',
    ],
  });
  const authorize = async (redirectUri: string, registered = native) =>
    validateAuthorizationRequest(
      {
        client_id: registered.clientId,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: 'openid',
        code_challenge: await computeCodeChallenge(VERIFIER),
        code_challenge_method: 'S256',
      },
      { findClient: async () => registered },
    );

  it('matches a public client’s IP-literal loopback URI at any port, keeping the URI used', async () => {
    for (const uri of [
      'http://127.0.0.1:53124/callback',
      'http://[::1]:8000/callback',
      'http://127.0.0.1/callback',
    ]) {
      const { request } = await authorize(uri);
      expect(request.redirectUri).toBe(uri);
    }
  });

  it('compares scheme, host, path and query exactly', () => {
    for (const uri of [
      'http://127.0.0.1:53124/callback/',
      'http://127.0.0.1:53124/Callback',
      'http://127.0.0.1:53124/callback?x=1',
      'http://127.0.0.2:53124/callback',
      'https://127.0.0.1:53124/callback',
      'http://[::1]:53124/other',
      'http://127.0.0.1:99999/callback',
      'http://user@127.0.0.1:5000/callback',
    ])
      expect(matchesLoopbackRedirect(uri, native), uri).toBe(false);
  });

  it('keeps exact matching for localhost, https and confidential clients', async () => {
    for (const uri of ['http://localhost:5000/cb', 'https://app.example:444/cb']) {
      const error = (await rejection(authorize(uri))) as AuthorizationError;
      expect(error.description).toBe('redirect_uri is not registered for this client');
      expect(error.redirectUri).toBeUndefined();
    }
    const confidential = { ...native, public: false };
    expect(matchesLoopbackRedirect('http://127.0.0.1:5000/callback', confidential)).toBe(false);
    const error = (await rejection(
      authorize('http://127.0.0.1:5000/callback', confidential),
    )) as AuthorizationError;
    expect(error.description).toBe('redirect_uri is not registered for this client');
  });

  it('still requires PKCE from the public client', async () => {
    const error = (await rejection(
      validateAuthorizationRequest(
        { client_id: native.clientId, redirect_uri: 'http://127.0.0.1:5000/callback', response_type: 'code' },
        { findClient: async () => native },
      ),
    )) as AuthorizationError;
    expect(error.description).toMatch(/PKCE is required/);
    expect(error.redirectUri).toBe('http://127.0.0.1:5000/callback');
  });
});

async function flow() {
  const clock = manualClock();
  const ring = await keyRing('ES256', clock);
  const { storage, hasher } = await seededStorage();
  const registered = client({
    clientId: 'kubectl',
    public: true,
    trusted: false,
    grantTypes: ['authorization_code', 'refresh_token'],
    scopes: ['openid', 'profile', 'email', 'groups', 'offline_access'],
    redirectUris: ['http://127.0.0.1/callback'],
    audiences: ['kubernetes:a', 'kubernetes:b', 'https://web.example'],
  });
  await storage.clients.create(registered);
  const context: TokenEndpointContext = {
    issuer: ISSUER,
    keys: ring,
    clock,
    findClient: (id) => storage.clients.findById(id),
    passwords: {
      findUserByUsername: (u) => storage.users.findByUsername(u),
      hasher,
      dummyHash: await hasher.hash('x'),
    },
    storage,
    lifetimes: { idToken: 600, grant: 7200, maxAccessToken: 600 },
    clusterAudiences: async () => ['kubernetes:a', 'kubernetes:b'],
  };
  const user = await storage.users.findById('u-alice');
  if (user === undefined) throw new Error('fixture user missing');
  const code = async (extra: Partial<AuthorizationRequest> = {}) =>
    issueAuthorizationCode(
      {
        clientId: 'kubectl',
        redirectUri: 'http://127.0.0.1:40123/callback',
        scope: ['openid', 'groups', 'email', 'offline_access'],
        prompt: [],
        codeChallenge: await computeCodeChallenge(VERIFIER),
        codeChallengeMethod: 'S256',
        ...extra,
      },
      { user, authTime: new Date(clock.now()), sessionId: null, fresh: true },
      { clock, codes: storage.authorizationCodes },
    );
  const exchange = (value: string, extra: Record<string, string | string[]> = {}) =>
    handleTokenRequest(
      {
        grant_type: 'authorization_code',
        code: value,
        client_id: 'kubectl',
        redirect_uri: 'http://127.0.0.1:40123/callback',
        code_verifier: VERIFIER,
        ...extra,
      },
      undefined,
      context,
    );
  const refresh = (token: string, extra: Record<string, string> = {}) =>
    handleTokenRequest(
      { grant_type: 'refresh_token', refresh_token: token, client_id: 'kubectl', ...extra },
      undefined,
      context,
    );
  return { clock, storage, context, code, exchange, refresh };
}

describe('RFC 8707 resource on the code and refresh grants', () => {
  it('checks the redirect_uri used against the code exactly (the port included)', async () => {
    const { code, exchange } = await flow();
    const error = (await rejection(
      exchange(await code(), { redirect_uri: 'http://127.0.0.1:40124/callback' }),
    )) as OAuthProtocolError;
    expect(error.description).toBe('redirect_uri does not match the authorization request');
  });

  it('gives the code’s resource as aud, with the claims a cluster maps', async () => {
    const { code, exchange } = await flow();
    const tokens = await exchange(await code({ resource: ['kubernetes:a'] }));
    const claims = decodeJwt(tokens.access_token);
    expect(claims.aud).toBe('kubernetes:a');
    expect(claims.preferred_username).toBe('Alice');
    expect(claims.groups).toEqual(['dev', 'ops']);
    expect(claims.email).toBe('alice@example.test');
    expect(claims.email_verified).toBe(false);
  });

  it('refuses at the token endpoint a resource the authorization request did not name', async () => {
    const { code, exchange } = await flow();
    const error = (await rejection(
      exchange(await code({ resource: ['kubernetes:a'] }), { resource: 'kubernetes:b' }),
    )) as OAuthProtocolError;
    expect(error.code).toBe('invalid_target');
  });

  it('serves every cluster from one sign-in: a refresh with resource=B gives a token for B', async () => {
    const { code, exchange, refresh } = await flow();
    const first = await exchange(await code(), { resource: 'kubernetes:a' });
    expect(decodeJwt(first.access_token).aud).toBe('kubernetes:a');
    const second = await refresh(first.refresh_token as string, { resource: 'kubernetes:b' });
    expect(decodeJwt(second.access_token).aud).toBe('kubernetes:b');
    expect(second.refresh_token).not.toBe(first.refresh_token);
    // The rotated token is spent: presenting it again revokes the grant.
    const reuse = (await rejection(refresh(first.refresh_token as string))) as OAuthProtocolError;
    expect(reuse.code).toBe('invalid_grant');
  });

  it('refuses a resource the client may not have, without spending the refresh token', async () => {
    const { code, exchange, refresh } = await flow();
    const first = await exchange(await code(), { resource: 'kubernetes:a' });
    const error = (await rejection(
      refresh(first.refresh_token as string, { resource: 'kubernetes:c' }),
    )) as OAuthProtocolError;
    expect(error.code).toBe('invalid_target');
    const again = await refresh(first.refresh_token as string);
    expect(again.access_token).toBeTypeOf('string');
  });

  it('keeps personal data out of tokens for a web application', async () => {
    const { code, exchange } = await flow();
    const tokens = await exchange(await code(), { resource: 'https://web.example' });
    const claims = decodeJwt(tokens.access_token);
    expect(claims.aud).toBe('https://web.example');
    expect(claims).not.toHaveProperty('preferred_username');
    expect(claims).not.toHaveProperty('groups');
    expect(claims).not.toHaveProperty('email');
  });
});

describe('Cluster administration', () => {
  it('registers a cluster with its default audience, a bound tokenreview key and the kubectl client', async () => {
    const ports = adminPorts();
    const created = await addCluster(ports, { name: 'Prod' });
    expect(created.cluster.name).toBe('prod');
    expect(created.cluster.audience).toBe('kubernetes:prod');
    expect(created.kubectlClientCreated).toBe(true);
    const key = await authenticateApiKey(created.apiKey, 'tokenreview', (p) =>
      ports.storage.apiKeys.findByPrefix(p),
    );
    expect(key.cluster).toEqual({ name: 'prod', audience: 'kubernetes:prod' });
    const kubectl = await ports.storage.clients.findById(created.cluster.kubectlClientId as string);
    expect(kubectl).toMatchObject({
      name: 'kubectl',
      public: true,
      secretHash: null,
      grantTypes: [DEVICE_CODE_GRANT_TYPE, 'authorization_code', 'refresh_token'],
      redirectUris: ['http://127.0.0.1/callback', 'http://[::1]/callback'],
      scopes: ['openid', 'profile', 'email', 'groups', 'offline_access'],
      audiences: ['kubernetes:prod'],
    });
  });

  it('shares one kubectl client, whose audiences follow the clusters on add and remove', async () => {
    const ports = adminPorts();
    const a = await addCluster(ports, { name: 'a' });
    const b = await addCluster(ports, { name: 'b', audience: 'https://b.k8s.example' });
    expect(b.kubectlClientCreated).toBe(false);
    expect(b.cluster.kubectlClientId).toBe(a.cluster.kubectlClientId);
    const id = a.cluster.kubectlClientId as string;
    expect((await ports.storage.clients.findById(id))?.audiences).toEqual([
      'kubernetes:a',
      'https://b.k8s.example',
    ]);
    expect((await listClusters(ports)).map((c) => c.name)).toEqual(['a', 'b']);

    expect(await removeCluster(ports, 'A')).toEqual({ name: 'a', revokedApiKeys: 1 });
    expect((await ports.storage.clients.findById(id))?.audiences).toEqual(['https://b.k8s.example']);
    // A key of a removed cluster must not survive as an unbound key, which would accept every token.
    const error = await rejection(
      authenticateApiKey(a.apiKey, 'tokenreview', (p) => ports.storage.apiKeys.findByPrefix(p)),
    );
    expect(error.message).toBe('the API key is not valid');
    await removeCluster(ports, 'b');
    expect((await ports.storage.clients.findById(id))?.audiences).toEqual([]);
    const c = await addCluster(ports, { name: 'c' });
    expect(c.cluster.kubectlClientId).toBe(id);
  });

  it('refuses a taken name or audience, a bad name, and unknown clusters', async () => {
    const ports = adminPorts();
    await addCluster(ports, { name: 'prod' });
    const name = await rejection(addCluster(ports, { name: 'PROD' }));
    expect(name).toBeInstanceOf(AdminError);
    expect((name as AdminError).problemCode).toBe('cluster_exists');
    const audience = (await rejection(
      addCluster(ports, { name: 'other', audience: 'kubernetes:prod' }),
    )) as AdminError;
    expect(audience.message).toBe('another cluster has the audience kubernetes:prod');
    const bad = (await rejection(addCluster(ports, { name: 'no_underscores' }))) as AdminError;
    expect(bad.problemCode).toBe('invalid_cluster');
    expect(bad.message).toMatch(/^name "no_underscores": must be 1 to 63 letters/);
    const missing = (await rejection(getCluster(ports, 'nope'))) as AdminError;
    expect(missing.problemCode).toBe('cluster_not_found');
    expect(((await rejection(removeCluster(ports, 'nope'))) as AdminError).problemCode).toBe(
      'cluster_not_found',
    );
    // Nothing half-made by the refusals: one cluster, one key, one client.
    expect(await ports.storage.apiKeys.count()).toBe(1);
    expect(await ports.storage.clients.count()).toBe(1);
  });

  it('mints a fresh cluster-bound key for a webhook kubeconfig, leaving the old one alone', async () => {
    const ports = adminPorts();
    const created = await addCluster(ports, { name: 'prod' });
    const fresh = await issueClusterApiKey(ports, 'prod');
    expect(fresh.key).not.toBe(created.apiKey);
    expect(fresh.record.cluster).toEqual({ name: 'prod', audience: 'kubernetes:prod' });
    expect((await ports.storage.apiKeys.list()).filter((k) => k.revokedAt === null)).toHaveLength(2);
    const config = webhookKubeconfig({
      issuer: 'https://id.example/oauth',
      cluster: 'prod',
      apiKey: fresh.key,
    });
    expect(config.clusters[0]?.cluster.server).toBe('https://id.example/oauth/authenticate');
    expect(config.users[0]?.user.token).toBe(fresh.key);
  });
});

describe('TokenReview with a cluster-bound API key', () => {
  async function setup() {
    const clock = manualClock();
    const ring = await keyRing('RS256', clock);
    const { storage } = await seededStorage();
    await storage.clients.create(client({ audiences: ['kubernetes:a', 'kubernetes:b'] }));
    const context: TokenReviewContext = {
      issuer: ISSUER,
      keys: ring,
      clock,
      findUser: (id) => storage.users.findById(id),
      findClient: (id) => storage.clients.findById(id),
      isRevoked: (kind, value) => storage.revocations.isRevoked(kind, value, new Date(clock.now())),
    };
    const tokenFor = async (audience: string[]) =>
      (
        await issueAccessToken(
          ring,
          ISSUER,
          {
            subject: 'u-alice',
            clientId: 'cli',
            audience,
            scope: ['openid'],
            grantId: 'g1',
            lifetimeSeconds: 600,
          },
          clock,
        )
      ).token;
    const review = (token: string, cluster: string | null, audiences?: string[]) =>
      reviewToken(
        {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          spec: { token, ...(audiences === undefined ? {} : { audiences }) },
        },
        context,
        { cluster: cluster === null ? null : { name: cluster, audience: `kubernetes:${cluster}` } },
      );
    return { tokenFor, review };
  }

  it('authenticates a token for its cluster and answers that audience', async () => {
    const { tokenFor, review } = await setup();
    const answer = await review(await tokenFor(['kubernetes:a']), 'a');
    expect(answer.status).toMatchObject({ authenticated: true, audiences: ['kubernetes:a'] });
    expect(answer.status.user?.username).toBe('Alice');
    // The API server's own audiences: the binding vouches, status.audiences is left out.
    const own = await review(await tokenFor(['kubernetes:a']), 'a', ['https://kubernetes.default.svc']);
    expect(own.status.authenticated).toBe(true);
    expect(own.status.audiences).toBeUndefined();
  });

  it('refuses a token for cluster A, or for a web application, at cluster B (HTTP-free, with an error)', async () => {
    const { tokenFor, review } = await setup();
    for (const audience of [['kubernetes:a'], ['cli'], ['https://web.example']]) {
      const answer = await review(await tokenFor(audience), 'b');
      expect(answer.status).toEqual({
        authenticated: false,
        error: TOKEN_REVIEW_DENIAL_MESSAGES.cluster_mismatch,
      });
    }
  });

  it('leaves an unbound key as it was: any live token, the request’s audiences', async () => {
    const { tokenFor, review } = await setup();
    expect((await review(await tokenFor(['cli']), null)).status.authenticated).toBe(true);
    expect((await review(await tokenFor(['kubernetes:a']), null)).status).toMatchObject({
      authenticated: true,
    });
    expect((await review(await tokenFor(['kubernetes:a']), null, ['kubernetes:b'])).status.error).toBe(
      TOKEN_REVIEW_DENIAL_MESSAGES.audience_mismatch,
    );
  });
});

describe('Kubernetes AuthenticationConfiguration', () => {
  const cluster = { name: 'prod', audience: 'kubernetes:prod' };

  it('refuses an issuer that is not https and EdDSA signatures', () => {
    expect(
      thrown(() =>
        clusterAuthenticationConfiguration(cluster, {
          issuer: 'http://id.example/oauth',
          algorithm: 'RS256',
        }),
      ).message,
    ).toMatch(/^the issuer http:\/\/id\.example\/oauth is not https/);
    expect(
      thrown(() =>
        clusterAuthenticationConfiguration(cluster, {
          issuer: 'https://id.example/oauth',
          algorithm: 'EdDSA',
        }),
      ).message,
    ).toMatch(/EdDSA, which Kubernetes does not verify/);
  });

  it('names the issuer, the cluster audience and the claim mappings TokenReview uses', () => {
    const config = clusterAuthenticationConfiguration(cluster, {
      issuer: 'https://id.example/oauth',
      algorithm: 'ES256',
    });
    expect(config.jwt[0]?.issuer).toEqual({
      url: 'https://id.example/oauth',
      audiences: ['kubernetes:prod'],
      audienceMatchPolicy: 'MatchAny',
    });
    expect(config.jwt[0]?.claimMappings.username).toEqual({ claim: 'preferred_username', prefix: '' });
  });

  it("carries the PEM certificate authority of idgate's certificate when given", () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const config = clusterAuthenticationConfiguration(cluster, {
      issuer: 'https://id.example/oauth',
      algorithm: 'RS256',
      certificateAuthority: pem,
    });
    expect(config.jwt[0]?.issuer.certificateAuthority).toBe(pem);
  });
});
