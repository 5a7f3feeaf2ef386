import { type AuditEventOf, LIMITS, LinkedIdentity, Problem, SessionInfo } from '@idgate/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envFor, runInProcess } from '../cli/support.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { addUpstreamProvider, reviewedGroups } from '../helpers/federation.js';
import { registerResponseSecrets, registerSecret } from '../helpers/run-record.js';
import { startTestServer, TEST_SECRET, type TestServer } from '../helpers/server.js';
import { startUpstreamOidc, type UpstreamOidc } from '../helpers/upstream-oidc.js';
import { pkceAuthorizationUrl, signIn, UserAgent } from '../helpers/user-agent.js';
import { adminRequest, listedEvents, streamedEvents, tokenEndpoint, withHeaders } from './support.js';

const PASSWORD = 'bounded-input-staple-5e1d';
const RP = 'https://rp.example.test/cb';
/** A user agent twelve times the bound: what a client may send, not what idgate keeps. */
const LONG_AGENT = `Mozilla/5.0 (bounded) ${'x'.repeat(6_000)}`;

const groups = (count: number, prefix = 'g') =>
  Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(3, '0')}`);

// What idgate stores from outside is bounded, the same on every path that stores it, over real
// HTTP on SQLite and PostgreSQL: a user agent is cut (sessions and audit events alike), a local
// user's groups are refused past the bound (admin API and CLI), an upstream's are cut by a
// documented rule and counted on the sign-in event.
describe.each(testDatabaseUrls())('bounded input on $name', (kind) => {
  let t: TestServer;
  let upstream: UpstreamOidc;
  let adminKey: string;
  let reviewKey: string;
  let web: { clientId: string; clientSecret: string };
  let trusted: { clientId: string; clientSecret: string };
  let admin: ReturnType<typeof adminRequest>;
  const cli = (args: string[]) =>
    runInProcess(args, { env: envFor(t.database.url, { IDGATE_SECRET: TEST_SECRET }) });

  beforeAll(async () => {
    t = await startTestServer(kind);
    adminKey = await t.addApiKey(['admin']);
    reviewKey = await t.addApiKey(['tokenreview']);
    admin = adminRequest(t, adminKey);
    await t.addUser('uma', PASSWORD);
    web = await t.addClient({ grants: ['authorization_code'], scopes: ['openid'], redirectUris: [RP] });
    trusted = await t.addClient({ trusted: true, grants: ['password'], scopes: ['openid', 'groups'] });
    upstream = await startUpstreamOidc({ redirectUris: [`${t.issuer}/callback/corp`] });
    upstream.accounts.set('u-many', {
      sub: 'u-many',
      preferred_username: 'many.groups',
      // 250 valid names, reported out of order, one twice, one with a space and one too long.
      groups: [...groups(250).reverse(), 'g-000', 'has space', 'y'.repeat(300)],
    });
    await addUpstreamProvider(t, upstream, {
      scopes: ['openid', 'profile', 'groups'],
      tokenClientId: trusted.clientId,
    });
  });
  afterAll(async () => {
    await upstream?.stop();
    await t?.close();
  });

  it('cuts a long user agent to its first 512 characters in the session and in every audit event', async () => {
    const kept = LONG_AGENT.slice(0, LIMITS.userAgentLength);
    const since = new Date().toISOString();
    // A browser sign-in (session, sign-in, consent, code) and a password grant, both sending it.
    const { url: authorize } = pkceAuthorizationUrl(t.issuer, {
      client_id: web.clientId,
      redirect_uri: RP,
      scope: 'openid',
      state: 's',
    });
    const browser = new UserAgent(withHeaders({ 'user-agent': LONG_AGENT }));
    const { callback } = await signIn(browser, authorize, {
      redirectPrefix: RP,
      username: 'uma',
      password: PASSWORD,
    });
    registerSecret('authorization code', callback.searchParams.get('code') ?? undefined);
    const token = tokenEndpoint(t, trusted);
    const granted = await token(
      { grant_type: 'password', username: 'uma', password: PASSWORD, scope: 'openid' },
      { 'user-agent': LONG_AGENT },
    );
    expect(granted.status).toBe(200);
    registerResponseSecrets(granted.body);

    const sessions = await admin('GET', 'users/uma/sessions');
    const [session] = ((await sessions.json()) as { items: unknown[] }).items.map((s) =>
      SessionInfo.parse(s),
    );
    expect(session?.userAgent).toBe(kept);

    const events = await listedEvents(t, adminKey, { user: 'uma', since });
    expect(events.map((e) => e.type)).toEqual([
      'sign-in.succeeded',
      'consent.granted',
      'code.issued',
      'sign-in.succeeded',
      'token.issued',
    ]);
    for (const event of events) expect(event.userAgent, event.type).toBe(kept);
    const ids = new Set(events.map((e) => e.id));
    const streamed = streamedEvents(t).filter((e) => ids.has(e.id as string));
    expect(streamed.map((e) => e.userAgent)).toEqual(events.map(() => kept));
  });

  it('refuses a local user in more than 200 groups, alike through the admin API and the CLI', async () => {
    const refusal = async (response: Response) => {
      expect(response.status).toBe(400);
      const problem = Problem.parse(await response.json());
      expect(problem.code).toBe('invalid_user');
      expect(problem.detail).toMatch(/^groups: must hold at most 200 groups/);
    };
    await refusal(await admin('POST', 'users', { username: 'olga', groups: groups(201) }));
    expect((await admin('POST', 'users', { username: 'olga', groups: groups(200) })).status).toBe(201);
    await refusal(await admin('PATCH', 'users/olga', { groups: groups(201) }));
    // The same group named twice counts once.
    expect((await admin('PATCH', 'users/olga', { groups: [...groups(200), 'g-000'] })).status).toBe(200);
    const extra = await admin('PUT', 'groups/one-more/members/olga');
    expect(extra.status).toBe(409);
    expect(Problem.parse(await extra.json())).toMatchObject({
      code: 'too_many_groups',
      detail: expect.stringMatching(/olga is in 200 groups already, the most a user may be in \(200\)/),
    });
    // A group name longer than 256 characters is refused as it always was.
    const long = await admin('PATCH', 'users/uma', { groups: ['n'.repeat(LIMITS.groupNameLength + 1)] });
    expect(long.status).toBe(400);

    const added = await cli(['users', 'add', 'petra', ...groups(201).flatMap((g) => ['--group', g])]);
    expect(added.code).not.toBe(0);
    expect(added.stderr).toMatch(/--group: must hold at most 200 groups/);
    const updated = await cli(['users', 'update', 'olga', '--groups', groups(201).join(',')]);
    expect(updated.code).not.toBe(0);
    expect(updated.stderr).toMatch(/--groups: must hold at most 200 groups/);
    const member = await cli(['groups', 'add', 'one-more', 'olga']);
    expect(member.code).not.toBe(0);
    expect(member.stderr).toMatch(/olga is in 200 groups already/);
    const olga = await admin('GET', 'users/olga');
    expect(((await olga.json()) as { groups: string[] }).groups).toHaveLength(200);
    expect((await admin('GET', 'users/petra')).status).toBe(404);
  });

  it('keeps 200 of an upstream identity’s groups, the first in byte order, and counts the rest on its sign-in', async () => {
    upstream.nextAccount = 'u-many';
    const browser = new UserAgent();
    let response = await browser.request(`${t.issuer}/login/corp`);
    for (let hop = 0; hop < 12 && response.headers.get('location') !== null; hop++)
      response = await browser.request(new URL(response.headers.get('location') as string, response.url));
    expect(response.status).toBe(200);
    const tokens = (await response.json()) as { access_token: string; id_token?: string };
    registerResponseSecrets(tokens);

    const kept = groups(LIMITS.upstreamGroupsPerIdentity).map((g) => `corp:${g}`);
    const identities = await admin('GET', 'users/many.groups/identities');
    const [identity] = ((await identities.json()) as { items: unknown[] }).items.map((i) =>
      LinkedIdentity.parse(i),
    );
    expect(identity?.groups).toEqual(kept);
    // What Kubernetes is told: the identity's groups as kept.
    expect(await reviewedGroups(t.issuer, reviewKey, tokens.access_token)).toEqual(kept);

    const [signedIn] = await listedEvents(t, adminKey, { user: 'many.groups', type: 'sign-in.succeeded' });
    // 50 past the bound, the name with a space and the one too long (the repeated one is no loss).
    expect((signedIn as AuditEventOf<'sign-in.succeeded'> | undefined)?.details).toMatchObject({
      method: 'upstream',
      provider: 'corp',
      groupsDropped: 52,
    });
  });
});
