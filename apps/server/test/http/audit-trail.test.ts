import type { AuditEvent } from '@idgate/schema';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envFor, runInProcess } from '../cli/support.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { TEST_SECRET } from '../helpers/harness.js';
import { signIn, UserAgent } from '../helpers/user-agent.js';

const REDIRECT = 'https://rp.example.test/cb';
const PASSWORD = 'battery-staple-audit-7f3a';

// The audit trail of whole flows, read back from the table: exactly the events each step makes,
// acted and attributed as they should be, and none of the secrets the flows used.
describe.each(testDatabaseUrls())('the audit trail on $name', (kind) => {
  let t: TestApp;
  let userId: string;
  let web: { clientId: string; clientSecret: string };
  let trusted: { clientId: string; clientSecret: string };
  let adminKey: string;
  const secrets: string[] = [PASSWORD];

  beforeAll(async () => {
    // No reuse window: the refresh token presented again is reuse at once.
    t = await startTestApp(kind, { tokens: { refreshReuseWindow: 0 } });
    userId = await t.addUser('kim', PASSWORD, { groups: ['sre'] });
    web = await t.addClient({
      grants: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'groups', 'offline_access'],
      redirectUris: [REDIRECT],
    });
    trusted = await t.addClient({
      trusted: true,
      grants: ['password', 'refresh_token'],
      scopes: ['openid', 'offline_access'],
    });
    adminKey = await t.addApiKey(['admin']);
    secrets.push(web.clientSecret, trusted.clientSecret, adminKey);
  });
  afterAll(async () => t?.close());

  const all = async (): Promise<AuditEvent[]> => t.services.storage.auditEvents.list({ limit: 1000 });
  /** The events recorded while `step` ran. */
  const during = async (step: () => Promise<unknown>): Promise<AuditEvent[]> => {
    const before = (await all()).length;
    await step();
    return (await all()).slice(before);
  };

  it('records a browser sign-in with a password: the failure, the sign-in, consent, the code and the tokens', async () => {
    const config = await oidc.discovery(new URL(t.issuer), web.clientId, web.clientSecret, undefined, {
      execute: [oidc.allowInsecureRequests],
      [oidc.customFetch]: (url, options) => t.fetch(url, options as RequestInit),
    });
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid groups offline_access',
      state: 's',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    const agent = new UserAgent(t.fetch);
    const events = await during(async () => {
      await expect(
        signIn(agent, url, { redirectPrefix: REDIRECT, username: 'kim', password: 'not the password' }),
      ).rejects.toThrow(/sign-in failed/);
      const { callback } = await signIn(agent, url, {
        redirectPrefix: REDIRECT,
        username: 'kim',
        password: PASSWORD,
      });
      const tokens = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: codeVerifier,
        expectedState: 's',
      });
      secrets.push(tokens.access_token, tokens.refresh_token ?? '', callback.searchParams.get('code') ?? '');
    });
    expect(events.map((e) => [e.type, e.outcome])).toEqual([
      ['sign-in.failed', 'failure'],
      ['sign-in.succeeded', 'success'],
      ['consent.granted', 'success'],
      ['code.issued', 'success'],
      ['code.redeemed', 'success'],
      ['token.issued', 'success'],
    ]);
    const [failed, succeeded, consent, code, redeemed, issued] = events;
    expect(failed).toMatchObject({
      // Refused, so acted by nobody known; about kim's account, so kim is its subject.
      actor: { kind: 'user', id: null, name: 'kim' },
      subject: userId,
      details: {
        method: 'password',
        provider: 'password',
        channel: 'browser',
        reason: 'invalid_credentials',
      },
    });
    expect(succeeded).toMatchObject({
      subject: userId,
      actor: { kind: 'user', id: userId },
      address: expect.any(String),
    });
    expect(consent).toMatchObject({
      subject: userId,
      clientId: web.clientId,
      details: { scopes: ['openid', 'groups', 'offline_access'] },
    });
    expect(code).toMatchObject({ subject: userId, clientId: web.clientId, details: { grantId: null } });
    const grantId = redeemed?.type === 'code.redeemed' ? redeemed.details.grantId : undefined;
    expect(issued).toMatchObject({
      actor: { kind: 'client', id: web.clientId },
      subject: userId,
      details: { grantType: 'authorization_code', grantId, scopes: ['openid', 'groups', 'offline_access'] },
    });
  });

  it('records a refresh reuse: the sign-in, the rotation, and the reuse that revoked the grant', async () => {
    const basic = `Basic ${btoa(`${trusted.clientId}:${trusted.clientSecret}`)}`;
    const token = async (body: Record<string, string>) => {
      const response = await t.fetch(`${t.issuer}/token`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(body),
      });
      return {
        status: response.status,
        body: (await response.json()) as { refresh_token?: string; access_token?: string },
      };
    };
    const events = await during(async () => {
      const first = await token({
        grant_type: 'password',
        username: 'kim',
        password: PASSWORD,
        scope: 'openid offline_access',
      });
      const rotated = await token({
        grant_type: 'refresh_token',
        refresh_token: first.body.refresh_token ?? '',
      });
      expect(rotated.status).toBe(200);
      expect(
        (await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token ?? '' })).status,
      ).toBe(400);
      secrets.push(
        first.body.refresh_token ?? '',
        first.body.access_token ?? '',
        rotated.body.refresh_token ?? '',
      );
    });
    expect(events.map((e) => e.type)).toEqual([
      'sign-in.succeeded',
      'token.issued',
      'refresh.rotated',
      'token.issued',
      'refresh.reuse-detected',
    ]);
    const grantIds = new Set(
      events.map((e) => (e.details as { grantId?: string }).grantId).filter((id) => id !== undefined),
    );
    expect(grantIds.size).toBe(1);
    expect(events[0]).toMatchObject({ clientId: trusted.clientId, details: { channel: 'password-grant' } });
    expect(events[1]).toMatchObject({ details: { grantType: 'password' } });
    expect(events[3]).toMatchObject({ details: { grantType: 'refresh_token' } });
    expect(events[4]).toMatchObject({ outcome: 'failure', subject: userId, details: { grantRevoked: true } });
  });

  it('records an admin change with its API key, and only the fields that changed', async () => {
    const events = await during(async () => {
      const response = await t.fetch(`${t.baseUrl}/admin/v1/users/kim`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ groups: ['sre', 'oncall'] }),
      });
      expect(response.status).toBe(200);
    });
    expect(events).toEqual([
      expect.objectContaining({
        type: 'admin.changed',
        actor: { kind: 'api-key', id: expect.any(String), name: expect.stringMatching(/^idg_/) },
        subject: userId,
        details: {
          objectKind: 'user',
          objectId: userId,
          action: 'updated',
          operation: null,
          before: { groups: ['sre'] },
          after: { groups: ['sre', 'oncall'] },
        },
      }),
    ]);
  });

  it('acts each of concurrent admin requests by its own API key', async () => {
    const otherKey = await t.addApiKey(['admin']);
    secrets.push(otherKey);
    const keyOf = (i: number) => (i % 2 === 0 ? adminKey : otherKey);
    // Twenty users created at once, two keys interleaved: the actor rides with each request, so
    // no request's key can end up on another's event.
    const events = await during(() =>
      Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const response = await t.fetch(`${t.baseUrl}/admin/v1/users`, {
            method: 'POST',
            headers: { authorization: `Bearer ${keyOf(i)}`, 'content-type': 'application/json' },
            body: JSON.stringify({ username: `actor-${i}`, password: `${PASSWORD}-${i}` }),
          });
          expect(response.status, await response.text()).toBe(201);
        }),
      ),
    );
    expect(events).toHaveLength(20);
    for (const event of events) {
      if (event.type !== 'admin.changed') throw new Error(`unexpected ${event.type}`);
      const i = Number(/^actor-(\d+)$/.exec(String(event.details.after?.username))?.[1]);
      // The key's public prefix is its first 12 characters (`idg_` and 8 more).
      expect(event.actor, `actor-${i}`).toEqual({
        kind: 'api-key',
        id: expect.any(String),
        name: keyOf(i).slice(0, 12),
      });
    }
  });

  it('records a key rotation through the admin API and through the CLI', async () => {
    const events = await during(async () => {
      const response = await t.fetch(`${t.baseUrl}/admin/v1/signing-keys/rotate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}` },
      });
      expect(response.status).toBe(200);
      const cli = await runInProcess(['keys', 'rotate', '--json'], {
        env: envFor(t.database.url, { IDGATE_SECRET: TEST_SECRET }),
      });
      expect(cli.code).toBe(0);
    });
    expect(events.map((e) => [e.type, e.actor.kind])).toEqual([
      ['key.rotated', 'api-key'],
      ['key.rotated', 'cli'],
    ]);
    const [api, cli] = events;
    expect(api).toMatchObject({ details: { trigger: 'admin', algorithm: 'RS256' } });
    expect(cli).toMatchObject({ details: { trigger: 'cli' } });
    const apiKid = api?.type === 'key.rotated' ? api.details.kid : '';
    expect(cli?.type === 'key.rotated' ? cli.details.retired : []).toEqual([apiKid]);
  });

  it('holds none of the secrets the flows used', async () => {
    const text = JSON.stringify(await all());
    for (const secret of secrets.filter((s) => s.length > 0)) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/passwordHash|secretHash|argon2/);
  });
});
