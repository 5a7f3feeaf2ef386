import { randomBytes } from 'node:crypto';
import type { AuditEvent, AuditEventOf } from '@idgate/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envFor, runInProcess } from '../cli/support.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { registerResponseSecrets, registerSecret } from '../helpers/run-record.js';
import { startTestServer, TEST_SECRET, type TestServer } from '../helpers/server.js';
import { pkceAuthorizationUrl, signIn, UserAgent } from '../helpers/user-agent.js';
import { adminRequest, listedEvents, streamedEvents, tokenEndpoint, withHeaders } from './support.js';

const PASSWORD = 'origin-of-events-4c2e';
const RP = 'https://rp.example.test/cb';

/** A caller's W3C trace context: the trace id every event of its requests must carry. */
function trace() {
  const traceId = randomBytes(16).toString('hex');
  return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
}

const codeDetails = (events: AuditEvent[]) => ({
  issued: (events.find((e) => e.type === 'code.issued') as AuditEventOf<'code.issued'> | undefined)?.details,
  redeemed: (events.find((e) => e.type === 'code.redeemed') as AuditEventOf<'code.redeemed'> | undefined)
    ?.details,
  replayed: (events.find((e) => e.type === 'code.replayed') as AuditEventOf<'code.replayed'> | undefined)
    ?.details,
  token: (events.find((e) => e.type === 'token.issued') as AuditEventOf<'token.issued'> | undefined)?.details,
});

// Every event says where it came from — address, user agent, the request's id and its trace id —
// on admin changes, password grants, browser sign-ins, revocations and TokenReviews; a browser
// sign-in names the client it was for, and an authorization code the grant it became. Over real
// HTTP on SQLite and PostgreSQL with tracing on, read back through the admin API and the stream.
describe.each(testDatabaseUrls())('where each audit event came from on $name', (kind) => {
  let receiver: OtlpReceiver;
  let t: TestServer;
  let adminKey: string;
  let reviewKey: string;
  let userId: string;
  let web: { clientId: string; clientSecret: string };
  let trusted: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    t = await startTestServer(kind, {
      otel: { endpoint: receiver.endpoint, protocol: 'http/json' },
      audit: { tokenReview: 'all' },
    });
    adminKey = await t.addApiKey(['admin']);
    reviewKey = await t.addApiKey(['tokenreview']);
    userId = await t.addUser('nia', PASSWORD);
    web = await t.addClient({
      grants: ['authorization_code'],
      scopes: ['openid'],
      redirectUris: [RP],
    });
    trusted = await t.addClient({ trusted: true, grants: ['password'], scopes: ['openid'] });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
  });

  it('names the address, user agent, request id and trace of admin changes; none for the CLI', async () => {
    const caller = trace();
    const headers = {
      'user-agent': 'admin-console/2.1',
      'x-request-id': 'req-admin-0001',
      traceparent: caller.traceparent,
    };
    const admin = adminRequest(t, adminKey);
    const since = new Date().toISOString();
    expect((await admin('PATCH', 'users/nia', { displayName: 'Nia' }, headers)).status).toBe(200);
    expect((await admin('POST', 'signing-keys/rotate', undefined, headers)).status).toBe(200);
    const cli = await runInProcess(['users', 'update', 'nia', '--display-name', 'Nia N.'], {
      env: envFor(t.database.url, { IDGATE_SECRET: TEST_SECRET }),
    });
    expect(cli.code, cli.stderr).toBe(0);

    const events = await listedEvents(t, adminKey, { since, type: ['admin.changed', 'key.rotated'] });
    const origin = (e: AuditEvent) => [e.type, e.actor.kind, e.address, e.userAgent, e.requestId, e.traceId];
    expect(events.map(origin)).toEqual([
      ['admin.changed', 'api-key', '127.0.0.1', 'admin-console/2.1', 'req-admin-0001', caller.traceId],
      ['key.rotated', 'api-key', '127.0.0.1', 'admin-console/2.1', 'req-admin-0001', caller.traceId],
      ['admin.changed', 'cli', null, null, null, null],
    ]);
    // The stream carries the same fields.
    const streamed = streamedEvents(t).find((e) => e.id === events[0]?.id);
    expect(streamed).toMatchObject({ requestId: 'req-admin-0001', traceId: caller.traceId });
  });

  it('names where a password grant’s sign-in and tokens came from', async () => {
    const caller = trace();
    const since = new Date().toISOString();
    const token = tokenEndpoint(t, trusted);
    const granted = await token(
      { grant_type: 'password', username: 'nia', password: PASSWORD, scope: 'openid' },
      { 'user-agent': 'backend/7', 'x-request-id': 'req-grant-0001', traceparent: caller.traceparent },
    );
    expect(granted.status).toBe(200);
    registerResponseSecrets(granted.body);
    const events = await listedEvents(t, adminKey, { since, user: 'nia' });
    expect(events.map((e) => [e.type, e.clientId, e.address, e.userAgent, e.requestId, e.traceId])).toEqual([
      ['sign-in.succeeded', trusted.clientId, '127.0.0.1', 'backend/7', 'req-grant-0001', caller.traceId],
      ['token.issued', trusted.clientId, '127.0.0.1', 'backend/7', 'req-grant-0001', caller.traceId],
    ]);
  });

  it('names the client of a browser sign-in, and links a code to the grant it became', async () => {
    const caller = trace();
    const since = new Date().toISOString();
    const { url: authorize, verifier } = pkceAuthorizationUrl(t.issuer, {
      client_id: web.clientId,
      redirect_uri: RP,
      scope: 'openid',
      state: 's',
    });
    const browser = new UserAgent(
      withHeaders({ 'user-agent': 'Firefox/140', traceparent: caller.traceparent }),
    );
    const { callback } = await signIn(browser, authorize, {
      redirectPrefix: RP,
      username: 'nia',
      password: PASSWORD,
    });
    const code = callback.searchParams.get('code') ?? '';
    registerSecret('authorization code', code);
    const exchange = tokenEndpoint(t, web);
    const form = { grant_type: 'authorization_code', code, redirect_uri: RP, code_verifier: verifier };
    const tokens = await exchange(form, { 'x-request-id': 'req-code-0001' });
    expect(tokens.status).toBe(200);
    registerResponseSecrets(tokens.body);
    expect((await exchange(form, { 'x-request-id': 'req-code-0002' })).status).toBe(400);
    const revoked = await fetch(`${t.issuer}/revoke`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${web.clientId}:${web.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        'user-agent': 'rp-backend/3',
        'x-request-id': 'req-revoke-0001',
      },
      body: new URLSearchParams({ token: tokens.body.access_token ?? '', token_type_hint: 'access_token' }),
    });
    expect(revoked.status).toBe(200);

    const events = await listedEvents(t, adminKey, { since, user: 'nia' });
    expect(events.map((e) => [e.type, e.clientId])).toEqual([
      ['sign-in.succeeded', web.clientId],
      ['consent.granted', web.clientId],
      ['code.issued', web.clientId],
      ['code.redeemed', web.clientId],
      ['token.issued', web.clientId],
      ['code.replayed', web.clientId],
      ['token.revoked', web.clientId],
    ]);
    // Each request's events share its id; the browser's carry its trace and user agent.
    const [signedIn, consent, issued, redeemed, token, replayed, revocation] = events;
    expect(signedIn).toMatchObject({
      userAgent: 'Firefox/140',
      traceId: caller.traceId,
      address: '127.0.0.1',
    });
    expect(signedIn?.requestId).toEqual(expect.any(String));
    expect([consent?.requestId, issued?.requestId]).toEqual([expect.any(String), consent?.requestId]);
    expect(consent?.requestId).not.toBe(signedIn?.requestId);
    expect([issued?.traceId, consent?.traceId]).toEqual([caller.traceId, caller.traceId]);
    expect([redeemed?.requestId, token?.requestId, replayed?.requestId]).toEqual([
      'req-code-0001',
      'req-code-0001',
      'req-code-0002',
    ]);
    expect(revocation).toMatchObject({ userAgent: 'rp-backend/3', requestId: 'req-revoke-0001' });
    // One code id from issue to redemption and replay; the grant it became is the tokens' grant.
    const codes = codeDetails(events);
    const codeId = codes.issued?.codeId;
    expect(codeId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(codes.redeemed).toEqual({ codeId, grantId: codes.token?.grantId });
    expect(codes.replayed).toMatchObject({ codeId, grantRevoked: true });
    expect(JSON.stringify(events)).not.toContain(code);
    expect(userId).toBe(signedIn?.subject);
  });

  it('names the request of each TokenReview written one by one', async () => {
    const caller = trace();
    const review = await fetch(`${t.issuer}/authenticate`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${reviewKey}`,
        'content-type': 'application/json',
        'user-agent': 'kube-apiserver/1.33',
        'x-request-id': 'req-review-0001',
        traceparent: caller.traceparent,
      },
      body: JSON.stringify({
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token: 'not-a-token' },
      }),
    });
    expect(review.status).toBe(200);
    await t.server.context.audit.flush();
    const [decided] = await listedEvents(t, adminKey, { type: 'token-review.decided' });
    expect(decided).toMatchObject({
      actor: { kind: 'api-key' },
      address: '127.0.0.1',
      userAgent: 'kube-apiserver/1.33',
      requestId: 'req-review-0001',
      traceId: caller.traceId,
      details: { authenticated: false, count: 1 },
    });
  });
});
