import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { addIdentityProvider } from '../helpers/federation.js';
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { corpLdapProvider, hasSlapd, PEOPLE_DN, type Slapd, startSlapd } from '../helpers/slapd.js';

const CLIENT = 3;

describe.skipIf(!hasSlapd)('OpenTelemetry spans of LDAP operations (slapd)', () => {
  let receiver: OtlpReceiver;
  let slapd: Slapd;
  let t: TestServer;
  let client: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    slapd = await startSlapd();
    const sqlite = testDatabaseUrls().find((kind) => kind.name === 'sqlite');
    if (sqlite === undefined) throw new Error('SQLite is always among the test databases');
    t = await startTestServer(sqlite, { otel: { endpoint: receiver.endpoint, protocol: 'http/json' } });
    client = await t.addClient({ grants: ['password'], trusted: true, scopes: ['openid', 'groups'] });
    await addIdentityProvider(t, corpLdapProvider(slapd));
  });
  afterAll(async () => {
    await t?.close();
    await slapd?.stop();
    await receiver?.stop();
  });

  it('runs each bind and search of a password grant in a client span, recording neither DN nor password', async () => {
    const traceId = randomBytes(16).toString('hex');
    const answer = await fetch(`${t.issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`,
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      },
      body: new URLSearchParams({
        grant_type: 'password',
        provider: 'corp-ldap',
        username: 'alice',
        password: 'alice-pass',
        scope: 'openid groups',
      }),
    });
    expect(answer.status).toBe(200);
    const tokens = (await answer.json()) as Record<string, string>;
    await t.server.services.tracing?.flush();
    const spans = receiver.spans.filter((span) => span.traceId === traceId);
    const request = spans.find((span) => span.name === 'POST /oauth/token');
    const ldap = spans.filter((span) => span.name.startsWith('LDAP '));
    expect(ldap.map((span) => span.name)).toEqual(expect.arrayContaining(['LDAP bind', 'LDAP search']));
    const port = Number(new URL(slapd.url).port);
    for (const span of ldap) {
      expect(span.parentSpanId).toBe(request?.spanId);
      expect(span.kind).toBe(CLIENT);
      expect(span.attributes).toMatchObject({
        'network.protocol.name': 'ldap',
        'server.address': '127.0.0.1',
        'server.port': port,
      });
    }
    const exported = receiver.requests.map((r) => r.body.toString('utf8')).join('\n');
    for (const secret of [
      'alice-pass',
      slapd.managerPassword,
      client.clientSecret,
      tokens.access_token as string,
      PEOPLE_DN,
    ])
      expect(exported).not.toContain(secret);
  });
});
