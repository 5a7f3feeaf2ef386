import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { addUpstreamProvider } from '../helpers/federation.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startUpstreamOidc, type UpstreamOidc } from '../helpers/upstream-oidc.js';
import { signIn, UserAgent } from '../helpers/user-agent.js';

const SERVER = 2;
const CLIENT = 3;
const INTERNAL = 1;
const RP = 'https://rp.example.test/cb';
const PASSWORD = 'otel-password-correct-horse-4711';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** A W3C trace context parent, as a caller's own tracer would send it. */
function parentContext(sampled = true) {
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-${sampled ? '01' : '00'}` };
}

/** `fetch` that sends `traceparent` with every request (the caller's trace around a browser flow). */
const withTraceparent =
  (traceparent: string): typeof fetch =>
  (input, init) =>
    fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), traceparent } });

describe.each(testDatabaseUrls())('OpenTelemetry traces exported over OTLP/HTTP on $name', (kind) => {
  const dbSystem = kind.name === 'sqlite' ? 'sqlite' : 'postgresql';
  let receiver: OtlpReceiver;
  let t: TestServer;
  let upstream: UpstreamOidc;
  let adminKey: string;
  let rp: { clientId: string; clientSecret: string };
  let closed = false;
  /** Every secret, token and code the run used: none may appear in any exported span. */
  const secrets = new Set<string>([PASSWORD]);

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    t = await startTestServer(kind, { otel: { endpoint: receiver.endpoint, protocol: 'http/json' } });
    adminKey = await t.addApiKey(['admin']);
    secrets.add(adminKey);
    await t.addUser('alice', PASSWORD, { email: 'alice@example.test' });
    rp = await t.addClient({
      name: 'Wiki',
      grants: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'offline_access'],
      redirectUris: [RP],
      trusted: true,
    });
    secrets.add(rp.clientSecret);
    upstream = await startUpstreamOidc({ redirectUris: [`${t.issuer}/callback/corp`] });
    secrets.add(upstream.clientSecret);
    upstream.accounts.set('u-1', { sub: 'u-1', preferred_username: 'carol', email: 'carol@corp.test' });
    const token = await t.addClient({ name: 'cli', grants: ['authorization_code'], trusted: true });
    secrets.add(token.clientSecret);
    await addUpstreamProvider(t, upstream, {
      scopes: ['openid', 'profile', 'email'],
      tokenClientId: token.clientId,
    });
  });
  afterAll(async () => {
    await upstream?.stop();
    if (!closed) await t?.close();
    await receiver?.stop();
  });

  const flush = async () => {
    await t.server.services.tracing?.flush();
  };
  const inTrace = (traceId: string) => receiver.spans.filter((span) => span.traceId === traceId);
  const childrenOf = (span: ReceivedSpan) => receiver.spans.filter((s) => s.parentSpanId === span.spanId);
  function serverSpan(traceId: string, name: string): ReceivedSpan {
    const found = inTrace(traceId).filter((span) => span.kind === SERVER && span.name === name);
    expect(found, `one server span ${name}`).toHaveLength(1);
    return found[0] as ReceivedSpan;
  }

  it('makes the request span a child of the traceparent it carried, with HTTP attributes and database spans', async () => {
    const parent = parentContext();
    const answer = await fetch(`${t.baseUrl}/admin/v1/users?limit=10`, {
      headers: {
        authorization: `Bearer ${adminKey}`,
        traceparent: parent.traceparent,
        'user-agent': 'otel-test/1.0',
      },
    });
    expect(answer.status).toBe(200);
    await flush();
    const span = serverSpan(parent.traceId, 'GET /admin/v1/users');
    expect(span.parentSpanId).toBe(parent.spanId);
    expect(span.service).toBe('idgate');
    const port = Number(new URL(t.baseUrl).port);
    expect(span.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.scheme': 'http',
      'url.path': '/admin/v1/users',
      'http.route': '/admin/v1/users',
      'http.response.status_code': 200,
      'server.address': '127.0.0.1',
      'server.port': port,
      'network.peer.address': '127.0.0.1',
      'client.address': '127.0.0.1',
      'user_agent.original': 'otel-test/1.0',
    });
    // The query string is never recorded (on /oauth/* it can carry a code or state).
    expect(span.attributes).not.toHaveProperty('url.query');
    const queries = childrenOf(span).filter((child) => child.attributes['db.system.name'] === dbSystem);
    expect(queries.length).toBeGreaterThan(0);
    for (const query of queries) expect(query.kind).toBe(CLIENT);
    expect(queries).toContainEqual(
      expect.objectContaining({
        name: 'SELECT users',
        attributes: expect.objectContaining({
          'db.operation.name': 'SELECT',
          'db.collection.name': 'users',
          'db.query.text': expect.stringMatching(/^select .* from "users"/),
        }),
      }),
    );
  });

  it('records statements with their placeholders, never the values bound to them', async () => {
    const parent = parentContext();
    const email = `dana-${hex(4)}@example.test`;
    const password = `zebra-quilt-${hex(8)}`;
    secrets.add(password);
    const answer = await fetch(`${t.baseUrl}/admin/v1/users`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${adminKey}`,
        'content-type': 'application/json',
        traceparent: parent.traceparent,
      },
      body: JSON.stringify({ username: 'dana', email, password }),
    });
    expect(answer.status).toBe(201);
    await flush();
    const span = serverSpan(parent.traceId, 'POST /admin/v1/users');
    const insert = childrenOf(span).find((child) => child.name === 'INSERT users');
    expect(insert?.attributes['db.query.text']).toMatch(/^insert into "users"/);
    expect(JSON.stringify(inTrace(parent.traceId))).not.toContain(email);
  });

  it('follows a request whose caller did not sample it: no span is exported', async () => {
    const parent = parentContext(false);
    await fetch(`${t.baseUrl}/admin/v1/users`, {
      headers: { authorization: `Bearer ${adminKey}`, traceparent: parent.traceparent },
    });
    await flush();
    expect(inTrace(parent.traceId)).toEqual([]);
  });

  it('traces a password sign-in and the code exchange, with a span for the token signature', async () => {
    const parent = parentContext();
    const agent = new UserAgent(withTraceparent(parent.traceparent));
    const verifier = oidc.randomPKCECodeVerifier();
    const state = `state-${hex(8)}`;
    const params = new URLSearchParams({
      client_id: rp.clientId,
      redirect_uri: RP,
      response_type: 'code',
      scope: 'openid profile offline_access',
      state,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const { callback } = await signIn(agent, `${t.issuer}/authorize?${params}`, {
      redirectPrefix: RP,
      username: 'alice',
      password: PASSWORD,
    });
    const code = callback.searchParams.get('code') as string;
    secrets.add(code).add(state).add(verifier);
    const answer = await fetch(`${t.issuer}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${rp.clientId}:${rp.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        traceparent: parent.traceparent,
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: RP,
        code_verifier: verifier,
      }),
    });
    expect(answer.status).toBe(200);
    const tokens = (await answer.json()) as Record<string, string>;
    for (const name of ['access_token', 'id_token', 'refresh_token']) secrets.add(tokens[name] as string);
    await flush();
    const authorize = serverSpan(parent.traceId, 'GET /oauth/authorize');
    expect(authorize.attributes['url.path']).toBe('/oauth/authorize');
    const token = serverSpan(parent.traceId, 'POST /oauth/token');
    expect(childrenOf(token)).toContainEqual(
      expect.objectContaining({
        name: 'sign RS256',
        kind: INTERNAL,
        attributes: { 'idgate.signing.algorithm': 'RS256' },
      }),
    );
    expect(childrenOf(token).some((child) => child.attributes['db.system.name'] === dbSystem)).toBe(true);
  });

  it('sends traceparent to the upstream identity provider, in the same trace', async () => {
    const parent = parentContext();
    upstream.nextAccount = 'u-1';
    const agent = new UserAgent(withTraceparent(parent.traceparent));
    let response = await agent.request(`${t.issuer}/login/corp`);
    for (let hop = 0; hop < 12 && response.headers.get('location') !== null; hop++) {
      const next = new URL(response.headers.get('location') as string, response.url || t.issuer);
      if (next.toString().startsWith(`${t.issuer}/callback/`)) {
        secrets.add(next.searchParams.get('code') as string).add(next.searchParams.get('state') as string);
      }
      response = await agent.request(next);
    }
    expect(response.status).toBe(200);
    const tokens = (await response.json()) as Record<string, string>;
    for (const name of ['access_token', 'id_token', 'refresh_token'])
      if (tokens[name]) secrets.add(tokens[name]);
    await flush();
    const callback = serverSpan(parent.traceId, 'GET /oauth/callback/:callback');
    expect(callback.attributes['url.path']).toBe('/oauth/callback/corp');
    const calls = childrenOf(callback).filter(
      (span) => span.kind === CLIENT && 'http.request.method' in span.attributes,
    );
    const tokenCall = calls.find((span) => String(span.attributes['url.full']).endsWith('/token'));
    expect(tokenCall?.attributes).toMatchObject({
      'http.request.method': 'POST',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(upstream.issuer).port),
      'http.response.status_code': 200,
    });
    // What the upstream received: the caller's trace, with idgate's client span as the parent.
    const sent = upstream.traceparents.find(({ request }) => request === 'POST /token');
    expect(sent?.traceparent).toBe(`00-${parent.traceId}-${tokenCall?.spanId}-01`);
  });

  it('exports no secret, token, code or password in any span, and flushes the last spans at shutdown', async () => {
    const parent = parentContext();
    await fetch(`${t.issuer}/.well-known/openid-configuration`, {
      headers: { traceparent: parent.traceparent },
    });
    closed = true;
    await t.close();
    expect(inTrace(parent.traceId).map((span) => span.name)).toEqual([
      'GET /oauth/.well-known/openid-configuration',
    ]);
    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const request of receiver.requests) {
      expect(request).toMatchObject({ method: 'POST', path: '/v1/traces', contentType: 'application/json' });
      const body = request.body.toString('utf8');
      for (const secret of secrets) expect(body).not.toContain(secret);
    }
    for (const span of receiver.spans)
      expect(span.attributes).not.toHaveProperty('http.request.header.authorization');
  });
});
