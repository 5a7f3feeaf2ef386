import type { AuditEvent } from '@idgate/schema';
import {
  createIdgateAdminClient,
  createIdgateClient,
  type IdgateAdminClient,
  type IdgateClient,
  IdgateHttpError,
} from '@idgate/sdk';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { assertBuilt, envFor, runInProcess } from '../cli/support.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { TEST_SECRET } from '../helpers/harness.js';
import type { UserAgent } from '../helpers/user-agent.js';
import { browser, passwordGrantClient, REDIRECT, signInTo, webApplication } from './sign-ins.js';

beforeAll(assertBuilt);

const PASSWORD = 'a sturdy pass phrase!';
const sid = (token: string) => (JSON.parse(atob(token.split('.')[1] as string)) as { sid: string }).sid;

// Disabling a user signs it out everywhere, in the transaction of the change: what an operator
// who disables someone leaving the company expects. Enabling it again gives nothing back.
describe.each(testDatabaseUrls())('disabling a user on $name', (kind) => {
  let t: TestApp;
  let admin: IdgateAdminClient;
  let idgate: IdgateClient;
  let web: Awaited<ReturnType<typeof webApplication>>;
  let cli: { clientId: string; clientSecret: string };
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp(kind);
    for (const username of ['ann', 'bob', 'cy']) ids[username] = await t.addUser(username, PASSWORD);
    const adminKey = await t.addApiKey(['admin']);
    admin = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: adminKey, fetch: t.fetch });
    // A cluster's webhook key reviews tokens: the token client sends it.
    const reviewKey = await t.addApiKey(['tokenreview']);
    idgate = createIdgateClient({ baseUrl: t.baseUrl, apiKey: reviewKey, fetch: t.fetch });
    web = await webApplication(t, 'Web');
    cli = await passwordGrantClient(t);
  });
  afterAll(async () => t?.close());

  const all = (): Promise<AuditEvent[]> => t.services.storage.auditEvents.list({ limit: 1000 });
  const during = async (step: () => Promise<unknown>): Promise<AuditEvent[]> => {
    const before = (await all()).length;
    await step();
    return (await all()).slice(before);
  };

  /** A browser session and its grant, and a password grant outside any browser. */
  async function signedInEverywhere(username: string) {
    const agent = browser(t);
    const { tokens } = await signInTo(web, agent, { username, password: PASSWORD });
    const grant = await idgate.passwordGrant({
      ...cli,
      username,
      password: PASSWORD,
      scope: 'openid offline_access',
    });
    return {
      agent,
      browser: {
        access: tokens.access_token,
        refresh: tokens.refresh_token as string,
        client: { clientId: web.clientId, clientSecret: web.clientSecret },
      },
      grant: { access: grant.access_token, refresh: grant.refresh_token as string, client: cli },
    };
  }
  type Signed = Awaited<ReturnType<typeof signedInEverywhere>>;

  /** Where a silent authorization (prompt=none) sends the browser back: a code, or an error. */
  async function silently(agent: UserAgent): Promise<string> {
    const url = oidc.buildAuthorizationUrl(web.config, {
      redirect_uri: REDIRECT,
      scope: 'openid offline_access',
      state: 's',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      prompt: 'none',
    });
    const response = await agent.request(url);
    const location = new URL(response.headers.get('location') ?? 'about:blank');
    return location.searchParams.get('error') ?? (location.searchParams.has('code') ? 'code' : 'nothing');
  }

  const refreshError = async (tokens: Signed['browser']) => {
    const refused = await idgate.refreshToken({ ...tokens.client, refreshToken: tokens.refresh }).then(
      () => 'refreshed',
      (error: unknown) => error,
    );
    return refused instanceof IdgateHttpError ? refused.oauthError?.error : refused;
  };
  const liveness = async (tokens: Signed['browser']) => ({
    introspection: (await idgate.introspectToken({ token: tokens.access, ...tokens.client })).active,
    review: (await idgate.reviewToken(tokens.access)).status.authenticated,
  });
  const signedOut = async (signed: Signed) => ({
    silent: await silently(signed.agent),
    refresh: [await refreshError(signed.browser), await refreshError(signed.grant)],
    browser: await liveness(signed.browser),
    grant: await liveness(signed.grant),
  });
  const SIGNED_OUT = {
    silent: 'login_required',
    refresh: ['invalid_grant', 'invalid_grant'],
    browser: { introspection: false, review: false },
    grant: { introspection: false, review: false },
  };

  /** The events of disabling a signed-in user: the change, the sessions ended, the grants revoked. */
  const disableEvents = (username: string, signed: Signed, actor: string) => {
    const userId = ids[username];
    const grantIds = [sid(signed.browser.access), sid(signed.grant.access)];
    return [
      {
        type: 'admin.changed',
        actor: actor,
        subject: userId,
        details: {
          objectKind: 'user',
          objectId: userId,
          action: 'updated',
          operation: null,
          before: { disabled: false },
          after: { disabled: true },
        },
      },
      {
        type: 'admin.changed',
        actor: actor,
        subject: userId,
        details: {
          objectKind: 'session',
          objectId: userId,
          action: 'updated',
          operation: 'end-all',
          before: null,
          after: null,
        },
      },
      {
        type: 'token.revoked',
        actor: actor,
        subject: userId,
        details: {
          reason: 'user-disabled',
          tokenType: 'grant',
          grantIds: expect.arrayContaining(grantIds),
          jti: null,
        },
      },
    ];
  };
  const shape = (events: AuditEvent[]) =>
    events.map((e) => ({ type: e.type, actor: e.actor.kind, subject: e.subject, details: e.details }));

  it('through the admin API: ends the browser session and revokes every grant, at once and for good', async () => {
    const ann = await signedInEverywhere('ann');
    expect(await silently(ann.agent)).toBe('code');
    expect(await liveness(ann.grant)).toEqual({ introspection: true, review: true });

    const events = await during(async () => {
      expect((await admin.updateUser('ann', { disabled: true })).disabled).toBe(true);
    });
    expect(shape(events)).toEqual(disableEvents('ann', ann, 'api-key'));
    const revoked = events[2]?.details as { grantIds: string[] };
    expect(revoked.grantIds).toHaveLength(2);
    expect(await signedOut(ann)).toEqual(SIGNED_OUT);
    expect(await admin.listUserSessions('ann')).toEqual({ items: [], nextCursor: null });
    expect(await admin.listUserGrants('ann')).toEqual({ items: [], nextCursor: null });

    // Enabling the user again records the change alone, and brings back no session or token.
    const enabled = await during(async () => {
      expect((await admin.updateUser('ann', { disabled: false })).disabled).toBe(false);
    });
    expect(shape(enabled).map((e) => [e.type, e.details])).toEqual([
      ['admin.changed', expect.objectContaining({ before: { disabled: true }, after: { disabled: false } })],
    ]);
    expect(await signedOut(ann)).toEqual(SIGNED_OUT);

    // Disabling the user again while it is disabled has nothing left to end; a PATCH that
    // repeats what is there changes nothing, and the trail records no change.
    await admin.updateUser('ann', { disabled: true });
    const again = await during(() => admin.updateUser('ann', { disabled: true, groups: [] }));
    expect(again).toEqual([]);
  });

  it('through `idgate users disable`: the same, and says what it ended', async () => {
    const bob = await signedInEverywhere('bob');
    expect(await liveness(bob.browser)).toEqual({ introspection: true, review: true });
    const env = envFor(t.database.url, { IDGATE_SECRET: TEST_SECRET });

    let output = '';
    const events = await during(async () => {
      const result = await runInProcess(['users', 'disable', 'bob'], { env });
      expect(result).toMatchObject({ code: 0, stderr: '' });
      output = result.stdout;
    });
    expect(output).toBe('user bob disabled; 1 session ended, 2 grants revoked\n');
    expect(shape(events)).toEqual(disableEvents('bob', bob, 'cli'));

    const enabled = await runInProcess(['users', 'enable', 'bob'], { env });
    expect(enabled).toMatchObject({ code: 0, stdout: 'user bob enabled\n' });
    // The CLI changed the database from another process: the server hears of the revocations
    // through the change log (NOTIFY on PostgreSQL, its poll on SQLite).
    await vi.waitFor(async () => expect(await liveness(bob.browser)).toEqual(SIGNED_OUT.browser), {
      timeout: 5000,
      interval: 100,
    });
    expect(await signedOut(bob)).toEqual(SIGNED_OUT);
  });

  it('deleting a user signs it out the same way, and records the deletion after the sign-out', async () => {
    const cy = await signedInEverywhere('cy');
    const userId = ids.cy;
    const events = await during(() => admin.deleteUser('cy'));
    expect(shape(events)).toEqual([
      {
        type: 'admin.changed',
        actor: 'api-key',
        subject: userId,
        details: expect.objectContaining({ objectKind: 'session', operation: 'end-all' }),
      },
      {
        type: 'token.revoked',
        actor: 'api-key',
        subject: userId,
        details: {
          reason: 'user-deleted',
          tokenType: 'grant',
          grantIds: expect.arrayContaining([sid(cy.browser.access), sid(cy.grant.access)]),
          jti: null,
        },
      },
      {
        type: 'admin.changed',
        actor: 'api-key',
        subject: userId,
        details: expect.objectContaining({ objectKind: 'user', action: 'deleted' }),
      },
    ]);
    expect(await signedOut(cy)).toEqual(SIGNED_OUT);
  });
});
