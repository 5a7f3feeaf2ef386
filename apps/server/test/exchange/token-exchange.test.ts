import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createIdgateAdminClient, createIdgateClient } from '@idgate/sdk';
import { base64url, decodeJwt, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer, testClock } from '../helpers/server.js';

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';

/** A loopback OIDC issuer serving discovery and JWKS, minting tokens with jose. */
async function startIssuer() {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  let reachable = true;
  let fetches = 0;
  const server: Server = createServer((request, response) => {
    if (!reachable) {
      response.writeHead(503).end();
      return;
    }
    if (request.url === '/.well-known/openid-configuration') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
    } else if (request.url === '/jwks') {
      fetches++;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ keys: [jwk] }));
    } else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let counter = 0;
  return {
    issuer,
    jwk,
    get fetches() {
      return fetches;
    },
    setReachable(value: boolean) {
      reachable = value;
    },
    async mint(claims: Record<string, unknown>, now: number, options: { kid?: string; exp?: number } = {}) {
      const iat = Math.floor(now / 1000);
      return new SignJWT({ jti: `jti-${++counter}-${Math.random()}`, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: options.kid ?? 'k1', typ: 'JWT' })
        .setIssuer(issuer)
        .setIssuedAt(iat)
        .setExpirationTime(options.exp ?? iat + 600)
        .sign(privateKey);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Issuer = Awaited<ReturnType<typeof startIssuer>>;

describe.each(testDatabaseUrls())('token exchange (RFC 8693) with openid-client on $name', (kind) => {
  const clock = testClock();
  let t: TestServer;
  let adminKey: string;
  let gha: Issuer;
  let gitlab: Issuer;
  let sa: Issuer;
  let config: oidc.Configuration;
  const admin = (path: string, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${t.baseUrl}/admin/v1${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
  const review = async (apiKey: string, token: string) => {
    const response = await fetch(`${t.baseUrl}/oauth/authenticate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }),
    });
    return ((await response.json()) as { status: Record<string, unknown> }).status;
  };
  const exchange = (subject: string, extra: Record<string, string> = {}) =>
    oidc.genericGrantRequest(config, EXCHANGE, {
      subject_token: subject,
      subject_token_type: JWT_TYPE,
      audience: 'prod',
      ...extra,
    });
  const refusal = async (promise: Promise<unknown>) => {
    const error = (await promise.then(
      () => undefined,
      (e: unknown) => e,
    )) as Error | undefined;
    expect(error).toBeInstanceOf(Error);
    if (error instanceof oidc.ResponseBodyError)
      return { error: error.error, description: error.error_description, status: error.status };
    // A 5xx answer is a ClientError whose cause is the response.
    const response = (error as { cause?: unknown } | undefined)?.cause as Response;
    const body = (await response.json()) as { error: string; error_description: string };
    return { error: body.error, description: body.error_description, status: response.status };
  };
  let prodKey: string;
  let stagingKey: string;

  beforeAll(async () => {
    [gha, gitlab, sa] = await Promise.all([startIssuer(), startIssuer(), startIssuer()]);
    t = await startTestServer(kind, {}, { clock });
    adminKey = await t.addApiKey(['admin']);
    const prod = (await (await admin('/clusters', { method: 'POST', body: { name: 'prod' } })).json()) as {
      apiKey: string;
    };
    const staging = (await (
      await admin('/clusters', { method: 'POST', body: { name: 'staging' } })
    ).json()) as {
      apiKey: string;
    };
    prodKey = prod.apiKey;
    stagingKey = staging.apiKey;
    const trusts = [
      {
        name: 'gha',
        issuer: gha.issuer,
        audience: 'idgate',
        condition: 'claims.repository == "acme/infra" && claims.ref == "refs/heads/main"',
        username: 'ci:{repository}',
        groups: ['ci-deployers'],
        clusters: ['prod'],
        maxTtl: 900,
      },
      {
        name: 'gitlab',
        issuer: gitlab.issuer,
        audience: 'https://idgate.example',
        condition: 'claims.project_path.startsWith("acme/") && claims.ref_protected == "true"',
        username: 'gitlab:{project_path}',
        groups: ['ci'],
        clusters: ['prod', 'staging'],
        maxTtl: 600,
      },
      {
        name: 'cluster-a',
        issuer: sa.issuer,
        audience: 'idgate',
        jwks: { keys: [sa.jwk] },
        condition: 'claims["kubernetes.io"].namespace == "deploy"',
        username: 'system-a:{sub}',
        clusters: ['prod'],
        maxTtl: 300,
      },
    ];
    for (const trust of trusts)
      expect((await admin('/trusts', { method: 'POST', body: trust })).status).toBe(201);
    // A public client allowed the exchange: the subject token is the credential (RFC 8693 §2.1).
    const ci = await t.addClient({ grants: [EXCHANGE], public: true, scopes: [] });
    config = new oidc.Configuration(
      { issuer: t.issuer, token_endpoint: `${t.issuer}/token` },
      ci.clientId,
      undefined,
      oidc.None(),
    );
    oidc.allowInsecureRequests(config);
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([gha?.close(), gitlab?.close(), sa?.close()]);
  });

  it('advertises the grant type in discovery', async () => {
    const discovery = (await (await fetch(`${t.issuer}/.well-known/openid-configuration`)).json()) as {
      grant_types_supported: string[];
    };
    expect(discovery.grant_types_supported).toContain(EXCHANGE);
  });

  it('exchanges GitHub-, GitLab- and service-account-shaped tokens for a token only their cluster accepts', async () => {
    const ghaToken = await gha.mint(
      {
        sub: 'repo:acme/infra:ref:refs/heads/main',
        aud: 'idgate',
        repository: 'acme/infra',
        ref: 'refs/heads/main',
        workflow: 'deploy',
        run_id: '42',
      },
      clock.now(),
    );
    const answer = await exchange(ghaToken);
    expect(answer.issued_token_type).toBe('urn:ietf:params:oauth:token-type:access_token');
    expect(answer.refresh_token).toBeUndefined();
    // The subject token's remaining 600 s (599 once a second turned since it was made), under the
    // trust's 900 s; the token never outlives the subject token.
    expect(answer.expires_in).toBeGreaterThanOrEqual(599);
    expect(answer.expires_in).toBeLessThanOrEqual(600);
    expect(decodeJwt(answer.access_token).exp).toBeLessThanOrEqual(decodeJwt(ghaToken).exp as number);
    const reviewed = await review(prodKey, answer.access_token);
    expect(reviewed).toMatchObject({
      authenticated: true,
      user: {
        username: 'ci:acme/infra',
        groups: ['ci-deployers'],
        uid: 'trust:gha:repo:acme/infra:ref:refs/heads/main',
      },
    });
    expect(await review(stagingKey, answer.access_token)).toMatchObject({
      authenticated: false,
      error: 'token is not for this cluster',
    });
    // Introspection sees it live, as the workload the trust made it.
    const introspector = await t.addClient({ grants: ['client_credentials'] });
    const introspected = await fetch(`${t.issuer}/introspect`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${btoa(`${introspector.clientId}:${introspector.clientSecret}`)}`,
      },
      body: new URLSearchParams({ token: answer.access_token }),
    });
    expect(await introspected.json()).toMatchObject({
      active: true,
      client_id: 'trust:gha',
      username: 'ci:acme/infra',
      aud: ['kubernetes:prod'],
    });

    const gitlabToken = await gitlab.mint(
      {
        sub: 'project_path:acme/app:ref_type:branch:ref:main',
        aud: 'https://idgate.example',
        project_path: 'acme/app',
        ref: 'main',
        ref_protected: 'true',
        pipeline_id: '7',
      },
      clock.now(),
    );
    const staging = await exchange(gitlabToken, { audience: 'staging', expires_in: '120' });
    expect(staging.expires_in).toBe(120);
    expect(await review(stagingKey, staging.access_token)).toMatchObject({
      authenticated: true,
      user: { username: 'gitlab:acme/app', groups: ['ci'] },
    });

    const subjectExp = Math.floor(clock.now() / 1000) + 100;
    const saToken = await sa.mint(
      {
        sub: 'system:serviceaccount:deploy:runner',
        aud: ['idgate'],
        'kubernetes.io': { namespace: 'deploy', pod: { name: 'runner-1' } },
      },
      clock.now(),
      { exp: subjectExp },
    );
    const pod = await exchange(saToken, { resource: 'kubernetes:prod' });
    // Capped by what the subject token has left (100 s, or 99 once a second turned since it was
    // made), not by the trust's 900 s; the token never outlives the subject token.
    expect(pod.expires_in).toBeGreaterThanOrEqual(99);
    expect(pod.expires_in).toBeLessThanOrEqual(100);
    expect(decodeJwt(pod.access_token).exp).toBeLessThanOrEqual(subjectExp);
    expect((await review(prodKey, pod.access_token)).user).toMatchObject({
      username: 'system-a:system:serviceaccount:deploy:runner',
    });

    const events = (await (await admin('/events?type=token.exchanged')).json()) as {
      items: Array<{ outcome: string; details: Record<string, unknown> }>;
    };
    const first = events.items.find((event) => event.details.trust === 'gha' && event.outcome === 'success');
    expect(first?.details).toMatchObject({
      issuer: gha.issuer,
      subject: 'repo:acme/infra:ref:refs/heads/main',
      cluster: 'prod',
      run: { repository: 'acme/infra', ref: 'refs/heads/main', workflow: 'deploy', runId: '42' },
    });
  });

  it('keeps working on a cached JWKS and answers 503 only while nothing is cached', async () => {
    const cold = await startIssuer();
    const trust = {
      name: 'cold',
      issuer: cold.issuer,
      audience: 'idgate',
      username: 'cold:{sub}',
      clusters: ['prod'],
      maxTtl: 60,
    };
    expect((await admin('/trusts', { method: 'POST', body: trust })).status).toBe(201);
    cold.setReachable(false);
    const unreachable = await refusal(exchange(await cold.mint({ sub: 's', aud: 'idgate' }, clock.now())));
    expect(unreachable).toMatchObject({ error: 'temporarily_unavailable', status: 503 });
    cold.setReachable(true);
    await exchange(await cold.mint({ sub: 's', aud: 'idgate' }, clock.now()));
    expect(cold.fetches).toBe(1);
    cold.setReachable(false);
    clock.advance(600_000);
    const cached = await exchange(await cold.mint({ sub: 's', aud: 'idgate' }, clock.now()));
    expect(cached.expires_in).toBe(60);
    await cold.close();
  });

  it('refuses a token for a cluster that requires a second factor, which a workload cannot have', async () => {
    const ok = { sub: 'repo:acme/infra', aud: 'idgate', repository: 'acme/infra', ref: 'refs/heads/main' };
    expect((await admin('/clusters/prod', { method: 'PATCH', body: { requireMfa: true } })).status).toBe(200);
    try {
      const refused = await refusal(exchange(await gha.mint(ok, clock.now())));
      expect(refused).toMatchObject({
        error: 'invalid_target',
        description:
          'cluster prod requires a sign-in with a second factor, which a token exchange cannot give',
      });
    } finally {
      expect((await admin('/clusters/prod', { method: 'PATCH', body: { requireMfa: false } })).status).toBe(
        200,
      );
    }
    await expect(exchange(await gha.mint(ok, clock.now()))).resolves.toMatchObject({
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    });
  });

  it('refuses each broken rule with its reason', async () => {
    const now = clock.now();
    const ok = { sub: 'repo:acme/infra', aud: 'idgate', repository: 'acme/infra', ref: 'refs/heads/main' };
    const cases: Array<[string, () => Promise<unknown>, string, RegExp]> = [
      [
        'wrong audience',
        async () => exchange(await gha.mint({ ...ok, aud: 'other' }, now)),
        'invalid_grant',
        /audience/,
      ],
      [
        'expired',
        async () => exchange(await gha.mint(ok, now - 3_600_000, { exp: Math.floor(now / 1000) - 1 })),
        'invalid_grant',
        /expired/,
      ],
      [
        'not yet valid',
        async () => exchange(await gha.mint({ ...ok, nbf: Math.floor(now / 1000) + 60 }, now)),
        'invalid_grant',
        /not valid yet/,
      ],
      [
        'untrusted issuer',
        async () =>
          exchange(
            await startIssuer().then(async (other) => {
              const token = await other.mint(ok, now);
              await other.close();
              return token;
            }),
          ),
        'invalid_grant',
        /no trust names/,
      ],
      [
        'unknown key',
        async () => exchange(await gha.mint(ok, now, { kid: 'k9' })),
        'invalid_grant',
        /key its issuer does not publish/,
      ],
      [
        'failed condition',
        async () => exchange(await gha.mint({ ...ok, ref: 'refs/heads/dev' }, now)),
        'invalid_grant',
        /condition of trust gha is false/,
      ],
      [
        'cluster not allowed',
        async () => exchange(await gha.mint(ok, now), { audience: 'staging' }),
        'invalid_target',
        /does not allow cluster staging/,
      ],
      [
        'unknown cluster',
        async () => exchange(await gha.mint(ok, now), { audience: 'nowhere' }),
        'invalid_target',
        /not a registered cluster/,
      ],
      [
        'lifetime over the limit',
        async () => exchange(await gha.mint(ok, now), { expires_in: '901' }),
        'invalid_request',
        /over the 900 seconds/,
      ],
      [
        'wrong token type',
        async () =>
          exchange(await gha.mint(ok, now), { subject_token_type: 'urn:ietf:params:oauth:token-type:saml2' }),
        'invalid_request',
        /subject_token_type/,
      ],
    ];
    for (const [what, promise, error, description] of cases) {
      const refused = await refusal(promise());
      expect({ what, error: refused.error }).toEqual({ what, error });
      expect(refused.description, what).toMatch(description);
    }

    const header = (value: object) => base64url.encode(JSON.stringify(value));
    const payload = header({ ...ok, iss: gha.issuer, exp: Math.floor(now / 1000) + 60, jti: 'none-1' });
    const none = await refusal(exchange(`${header({ alg: 'none' })}.${payload}.`));
    expect(none).toMatchObject({
      error: 'invalid_grant',
      description: expect.stringMatching(/signed with none/),
    });
    const secret = new TextEncoder().encode(JSON.stringify({ keys: [gha.jwk] }));
    const hs = await new SignJWT({ ...ok, jti: 'hs-1' })
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .setIssuer(gha.issuer)
      .setExpirationTime(Math.floor(now / 1000) + 60)
      .sign(secret);
    expect(await refusal(exchange(hs))).toMatchObject({
      error: 'invalid_grant',
      description: expect.stringMatching(/HS256/),
    });

    const once = await gha.mint(ok, now);
    const issued = await exchange(once);
    expect(await refusal(exchange(once))).toMatchObject({
      error: 'invalid_grant',
      description: expect.stringMatching(/used already/),
    });
    // Both are in the audit trail, under the subject token's jti: the token issued (its own jti and
    // lifetime) and the replay refused.
    const onceJti = decodeJwt(once).jti;
    const recorded = (await (await admin('/events?type=token.exchanged&limit=200')).json()) as {
      items: Array<{ outcome: string; details: Record<string, unknown> }>;
    };
    const ofOnce = recorded.items.filter((event) => event.details.subjectJti === onceJti);
    expect(ofOnce.map((event) => [event.outcome, event.details.reason]).sort()).toEqual([
      ['failure', 'replayed: subject_token was used already (its jti is spent)'],
      ['success', null],
    ]);
    expect(ofOnce.find((event) => event.outcome === 'success')?.details).toMatchObject({
      jti: decodeJwt(issued.access_token).jti,
      lifetime: issued.expires_in,
      trust: 'gha',
      cluster: 'prod',
    });
  });

  it('explains a token against a trust without issuing or spending it', async () => {
    const token = await gha.mint(
      { sub: 'repo:acme/infra', aud: 'idgate', repository: 'acme/infra', ref: 'refs/heads/dev', run_id: '9' },
      clock.now(),
    );
    const response = await admin('/trusts/gha/test', { method: 'POST', body: { token } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      trust: 'gha',
      matched: false,
      rule: 'condition',
      run: { repository: 'acme/infra', ref: 'refs/heads/dev', runId: '9' },
    });
    const good = await gha.mint(
      { sub: 'repo:acme/infra', aud: 'idgate', repository: 'acme/infra', ref: 'refs/heads/main' },
      clock.now(),
    );
    const matched = await (
      await admin('/trusts/gha/test', { method: 'POST', body: { token: good, cluster: 'staging' } })
    ).json();
    expect(matched).toMatchObject({
      matched: false,
      rule: 'cluster',
      identity: { username: 'ci:acme/infra', groups: ['ci-deployers'] },
      clusters: ['prod'],
    });
    // Nothing was spent: the same token still exchanges.
    expect((await exchange(good)).access_token).toBeTruthy();
    expect((await admin('/trusts/nope/test', { method: 'POST', body: { token } })).status).toBe(404);
  });

  it('manages trusts through the SDK; removing a trust stops its tokens at once', async () => {
    const sdk = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: adminKey });
    const token = await gitlab.mint(
      { sub: 'p', aud: 'https://idgate.example', project_path: 'acme/web', ref_protected: 'true' },
      clock.now(),
    );
    // The SDK's one call, with no client and the JWT carried as a secret (never in its errors).
    const client = createIdgateClient({ baseUrl: t.baseUrl });
    const answer = await client.tokenExchange({ subjectToken: token, audience: 'staging', expiresIn: 30 });
    expect(answer).toMatchObject({
      expires_in: 30,
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    });
    expect((await review(stagingKey, answer.access_token)).authenticated).toBe(true);
    const replay = await client
      .tokenExchange({ subjectToken: token, audience: 'staging' })
      .catch((e: unknown) => e);
    expect(String(replay)).toMatch(/used already/);
    expect(JSON.stringify(replay)).not.toContain(token);
    expect((await sdk.listTrusts()).items.map((trust) => trust.name)).toContain('gitlab');
    const updated = await sdk.updateTrust('GitLab', { groups: ['ci', 'web'], condition: null });
    expect(updated).toMatchObject({ groups: ['ci', 'web'], condition: null });
    const evaluation = await sdk.testTrust('gitlab', { token, cluster: 'staging' });
    expect(evaluation).toMatchObject({
      matched: true,
      identity: { username: 'gitlab:acme/web', groups: ['ci', 'web'] },
    });
    const bad = await admin('/trusts/gitlab', { method: 'PATCH', body: { condition: 'claims.(' } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      code: 'invalid_trust',
      detail: expect.stringMatching(/^condition: is not a CEL expression/),
    });
    const taken = await admin('/trusts', {
      method: 'POST',
      body: {
        name: 'GitLab',
        issuer: gitlab.issuer,
        audience: 'a',
        username: 'x:{sub}',
        clusters: ['prod'],
        maxTtl: 60,
      },
    });
    expect(taken.status).toBe(409);
    await sdk.deleteTrust('gitlab');
    expect(await review(stagingKey, answer.access_token)).toMatchObject({
      authenticated: false,
      error: 'trust no longer exists',
    });
    expect((await admin('/trusts/gitlab')).status).toBe(404);
  });

  it('gives an act claim for an actor token a trust accepts, and refuses one it does not', async () => {
    const now = clock.now();
    const subject = await gha.mint(
      { sub: 'repo:acme/infra', aud: 'idgate', repository: 'acme/infra', ref: 'refs/heads/main' },
      now,
    );
    const actor = await sa.mint(
      { sub: 'system:serviceaccount:deploy:bot', aud: 'idgate', 'kubernetes.io': { namespace: 'deploy' } },
      now,
    );
    const answer = await exchange(subject, { actor_token: actor, actor_token_type: JWT_TYPE });
    const claims = decodeJwt(answer.access_token);
    expect(claims).toMatchObject({
      aud: 'kubernetes:prod',
      client_id: 'trust:gha',
      preferred_username: 'ci:acme/infra',
      groups: ['ci-deployers'],
      act: { sub: 'system-a:system:serviceaccount:deploy:bot', iss: sa.issuer },
    });
    // What the cluster's AuthenticationConfiguration asks of a token: a username, client_id and sid.
    expect(typeof claims.sid).toBe('string');
    expect(claims.refresh_token).toBeUndefined();

    const other = await sa.mint({ sub: 'x', aud: 'idgate', 'kubernetes.io': { namespace: 'default' } }, now);
    const refused = await refusal(
      exchange(
        await gha.mint({ sub: 'r', aud: 'idgate', repository: 'acme/infra', ref: 'refs/heads/main' }, now),
        { actor_token: other, actor_token_type: JWT_TYPE },
      ),
    );
    expect(refused).toMatchObject({
      error: 'invalid_grant',
      description: expect.stringMatching(/^actor_token: .*condition/),
    });
    const alone = await refusal(exchange(subject, { actor_token: actor }));
    expect(alone).toMatchObject({
      error: 'invalid_request',
      description: 'actor_token and actor_token_type go together',
    });
  });
});
