import type { AuditEvent } from '@idgate/schema';
import { DEVICE_CODE_GRANT_TYPE, DeviceAuthorizationResponse } from '@idgate/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { addUpstreamProvider } from '../helpers/federation.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startUpstreamOidc, type UpstreamOidc } from '../helpers/upstream-oidc.js';
import { readForm, UserAgent } from '../helpers/user-agent.js';

const PASSWORD = 'battery-staple-audit-d41c';

// The audit trail of device decisions, admin changes of clients and identity providers, and a
// federated sign-in, over real HTTP on a listening server; beside audit-trail.test.ts, which keeps
// the password, refresh and key flows.
describe.each(testDatabaseUrls())(
  'the audit trail of devices, admin changes and federation on $name',
  (kind) => {
    let t: TestServer;
    let upstream: UpstreamOidc;
    let userId: string;
    let kubectl: { clientId: string };
    let adminKey: string;
    const secrets: string[] = [PASSWORD];

    beforeAll(async () => {
      t = await startTestServer(kind);
      userId = await t.addUser('dora', PASSWORD);
      kubectl = await t.addClient({
        public: true,
        grants: [DEVICE_CODE_GRANT_TYPE, 'refresh_token'],
        scopes: ['openid', 'groups', 'offline_access'],
      });
      adminKey = await t.addApiKey(['admin']);
      secrets.push(adminKey);
      upstream = await startUpstreamOidc({ redirectUris: [`${t.issuer}/callback/corp`] });
      upstream.accounts.set('u-100', { sub: 'u-100', preferred_username: 'Fed.Erica', groups: [] });
      secrets.push(upstream.clientSecret);
    });
    afterAll(async () => {
      await upstream?.stop();
      await t?.close();
    });

    const all = (): Promise<AuditEvent[]> => t.server.services.storage.auditEvents.list({ limit: 1000 });
    const during = async (step: () => Promise<unknown>): Promise<AuditEvent[]> => {
      const before = (await all()).length;
      await step();
      return (await all()).slice(before);
    };
    const follow = async (agent: UserAgent, response: Response) => {
      let current = response;
      while (current.status === 303 || current.status === 302) {
        current = await agent.request(new URL(current.headers.get('location') as string, t.issuer));
      }
      return { response: current, html: await current.text() };
    };
    const admin = (method: string, path: string, body?: unknown) =>
      fetch(`${t.baseUrl}/admin/v1/${path}`, {
        method,
        headers: {
          authorization: `Bearer ${adminKey}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    it('records a device approval and a denial by the person who decided', async () => {
      const start = async () => {
        const response = await fetch(`${t.issuer}/device_authorization`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ client_id: kubectl.clientId, scope: 'openid offline_access' }),
        });
        return DeviceAuthorizationResponse.parse(await response.json());
      };
      const agent = new UserAgent();
      const decide = async (userCode: string, decision: 'allow' | 'deny', signIn: boolean) => {
        let page = await follow(
          agent,
          await agent.request(`${t.issuer}/device`, { form: { user_code: userCode } }),
        );
        if (signIn) {
          const { action, fields } = readForm(page.html);
          page = await follow(
            agent,
            await agent.request(new URL(action, t.issuer), {
              form: { ...fields, username: 'dora', password: PASSWORD },
            }),
          );
        }
        const { action, fields } = readForm(page.html);
        const done = await agent.request(new URL(action, t.issuer), { form: { ...fields, decision } });
        expect(done.status).toBe(200);
      };
      const first = await start();
      const second = await start();
      secrets.push(first.device_code, second.device_code, first.user_code, second.user_code);
      const events = (
        await during(async () => {
          await decide(first.user_code, 'allow', true);
          await decide(second.user_code, 'deny', false);
        })
      ).filter((e) => e.type.startsWith('device.'));
      expect(events.map((e) => [e.type, e.outcome, e.actor.kind, e.actor.id, e.subject, e.clientId])).toEqual(
        [
          ['device.approved', 'success', 'user', userId, userId, kubectl.clientId],
          ['device.denied', 'failure', 'user', userId, userId, kubectl.clientId],
        ],
      );
      expect(events[0]).toMatchObject({
        address: '127.0.0.1',
        details: { scopes: ['openid', 'offline_access'] },
      });
    });

    it('records a client created and its secret rotated, with neither secret anywhere', async () => {
      let clientId = '';
      const events = await during(async () => {
        const created = await admin('POST', 'clients', {
          name: 'Billing',
          grantTypes: ['client_credentials'],
        });
        expect(created.status).toBe(201);
        const body = (await created.json()) as { clientId: string; clientSecret: string };
        clientId = body.clientId;
        const rotated = await admin('POST', `clients/${clientId}/secret`, { gracePeriod: 300 });
        expect(rotated.status).toBe(200);
        secrets.push(body.clientSecret, ((await rotated.json()) as { clientSecret: string }).clientSecret);
      });
      expect(
        events.map((e) => e.type === 'admin.changed' && [e.details.action, e.details.operation]),
      ).toEqual([
        ['created', null],
        ['updated', 'rotate-secret'],
      ]);
      expect(events[0]).toMatchObject({
        actor: { kind: 'api-key', name: expect.stringMatching(/^idg_/) },
        clientId,
        details: { objectKind: 'client', objectId: clientId, before: null, after: { name: 'Billing' } },
      });
      expect(events[1]).toMatchObject({ details: { before: {}, after: { gracePeriod: 300 } } });
      expect(JSON.stringify(events)).not.toMatch(/secretHash|clientSecret/);
    });

    it('records an identity provider changed: the setting before and after, its secret never', async () => {
      const created = await admin('POST', 'identity-providers', {
        type: 'github',
        name: 'gh',
        clientId: 'Iv1.before',
        clientSecret: 'gh-secret-before-91c2',
      });
      expect(created.status).toBe(201);
      secrets.push('gh-secret-before-91c2', 'gh-secret-after-7d0e');
      const events = await during(async () => {
        const changed = await admin('PATCH', 'identity-providers/gh', {
          clientId: 'Iv1.after',
          clientSecret: 'gh-secret-after-7d0e',
        });
        expect(changed.status).toBe(200);
      });
      expect(events).toEqual([
        expect.objectContaining({
          type: 'admin.changed',
          actor: expect.objectContaining({ kind: 'api-key' }),
          details: {
            objectKind: 'identity-provider',
            objectId: 'gh',
            action: 'updated',
            operation: 'rotate-secret',
            before: { clientId: 'Iv1.before' },
            after: { clientId: 'Iv1.after' },
          },
        }),
      ]);
    });

    it('records a federated sign-in: the upstream sign-in, the sign-in and the tokens', async () => {
      const tokenClient = await t.addClient({
        grants: ['authorization_code', 'refresh_token'],
        trusted: true,
        scopes: ['openid', 'offline_access'],
      });
      secrets.push(tokenClient.clientSecret);
      await addUpstreamProvider(t, upstream, {
        scopes: ['openid', 'profile'],
        tokenClientId: tokenClient.clientId,
      });
      const viaUpstream = async () => {
        const agent = new UserAgent();
        let response = await agent.request(`${t.issuer}/login/corp`);
        for (let hop = 0; hop < 12 && response.headers.get('location') !== null; hop++) {
          response = await agent.request(new URL(response.headers.get('location') as string, response.url));
        }
        return response;
      };
      upstream.nextAccount = 'u-100';
      const events = await during(async () => {
        const response = await viaUpstream();
        expect(response.status).toBe(200);
        const tokens = (await response.json()) as { access_token: string; refresh_token?: string };
        secrets.push(tokens.access_token, tokens.refresh_token ?? '');
      });
      expect(events.map((e) => [e.type, e.outcome])).toEqual([
        ['upstream.sign-in', 'success'],
        ['sign-in.succeeded', 'success'],
        ['token.issued', 'success'],
      ]);
      const signedIn = events[1]?.subject;
      expect(signedIn).toEqual(expect.any(String));
      expect(events[0]).toMatchObject({ subject: signedIn, details: { provider: 'corp', reason: null } });
      expect(events[1]).toMatchObject({
        details: { method: 'upstream', provider: 'corp', channel: 'browser', username: 'fed.erica' },
      });

      // The upstream refuses the person: its callback's error is recorded, naming nobody.
      upstream.nextAccount = null;
      const refused = await during(async () => expect((await viaUpstream()).status).toBe(400));
      expect(
        refused.map((e) => [e.type, e.outcome, e.subject, (e.details as { reason: string }).reason]),
      ).toEqual([
        ['upstream.sign-in', 'failure', null, 'access_denied'],
        ['sign-in.failed', 'failure', null, 'access_denied'],
      ]);
    });

    it('holds none of the secrets the flows used', async () => {
      const text = JSON.stringify(await all());
      for (const secret of secrets.filter((s) => s.length > 0)) expect(text).not.toContain(secret);
      expect(text).not.toMatch(/passwordHash|secretHash|argon2/);
    });
  },
);
