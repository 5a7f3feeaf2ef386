import type { AuditEvent } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { addIdentityProvider } from '../helpers/federation.js';
import { registerResponseSecrets, registerSecret } from '../helpers/run-record.js';
import { startTestServer } from '../helpers/server.js';
import { adminRequest, listedEvents, streamedEvents, tokenEndpoint } from './support.js';

const PASSWORD = 'personal-data-staple-77aa';
const USERNAME = 'zoe.ray@example.test';
const EMAIL = 'zoe@mail.example.test';
const NAME = 'Zoe Ray';
const UPSTREAM_SUBJECT = 'zoe-at-corp-4711';
const AGENT = 'PersonalAgent/1.0';
const HASH = /^hmac-sha256:[A-Za-z0-9_-]{43}$/;

// `audit.personalData` hashes or omits personal data wherever an event holds it — the username
// typed at sign-in, a person's name as actor, the names, email and upstream subject of an admin
// change, the address and user agent — before it is stored. Over real HTTP on SQLite and
// PostgreSQL, read back through the admin API and the JSON-lines stream.
describe.each(testDatabaseUrls())('personal data in audit events on $name', (kind) => {
  for (const policy of ['hash', 'omit'] as const) {
    it(`${policy}: no username, name, email, upstream subject, address or user agent is stored`, async () => {
      const t = await startTestServer(kind, { audit: { personalData: policy } });
      try {
        const adminKey = await t.addApiKey(['admin']);
        const admin = adminRequest(t, adminKey);
        const headers = { 'user-agent': AGENT };
        const created = await admin(
          'POST',
          'users',
          { username: USERNAME, email: EMAIL, displayName: NAME, password: PASSWORD },
          headers,
        );
        expect(created.status).toBe(201);
        registerSecret('password', PASSWORD);
        await addIdentityProvider(t, {
          type: 'oidc',
          name: 'corp',
          issuer: 'https://corp.example.test',
          clientId: 'idgate',
          clientSecret: 'corp-client-secret-0123456789',
        });
        registerSecret('client secret', 'corp-client-secret-0123456789');
        const linked = await admin(
          'POST',
          `users/${USERNAME}/identities`,
          { provider: 'corp', subject: UPSTREAM_SUBJECT },
          headers,
        );
        expect(linked.status).toBe(201);
        const client = await t.addClient({ trusted: true, grants: ['password'], scopes: ['openid'] });
        const token = tokenEndpoint(t, client);
        const typed = 'Zoe.Ray@Example.test';
        for (const password of ['not the password', PASSWORD]) {
          const answer = await token({ grant_type: 'password', username: typed, password }, headers);
          registerResponseSecrets(answer.body);
        }
        await token({ grant_type: 'password', username: 'nobody@example.test', password: 'x' }, headers);

        const events = await listedEvents(t, adminKey);
        const ids = new Set(events.map((e) => e.id));
        const streamed = streamedEvents(t).filter((e) => ids.has(e.id as string));
        expect(streamed).toHaveLength(events.length);
        for (const text of [JSON.stringify(events), JSON.stringify(streamed)]) {
          for (const value of [
            USERNAME,
            EMAIL,
            NAME,
            UPSTREAM_SUBJECT,
            AGENT,
            'nobody@example.test',
            '127.0.0.1',
          ])
            expect(text.toLowerCase()).not.toContain(value.toLowerCase());
        }

        // Ids stay: the user's events are still found by username.
        const zoe = await listedEvents(t, adminKey, { user: USERNAME });
        expect(zoe.map((e) => e.type)).toEqual([
          'admin.changed',
          'admin.changed',
          'sign-in.failed',
          'sign-in.succeeded',
          'token.issued',
        ]);
        const [createdEvent, linkedEvent, failed, succeeded] = zoe as [
          AuditEvent & { type: 'admin.changed' },
          AuditEvent & { type: 'admin.changed' },
          AuditEvent & { type: 'sign-in.failed' },
          AuditEvent & { type: 'sign-in.succeeded' },
        ];
        const nobody = events.find((e) => e.type === 'sign-in.failed' && e.subject === null);
        if (policy === 'hash') {
          // One value, one hash, wherever it appears: the typed username (lower-cased), the
          // actor's name and the created user's username correlate; other values differ.
          const hashed = createdEvent.details.after?.username;
          expect(hashed).toMatch(HASH);
          expect([failed.details.username, succeeded.details.username, succeeded.actor.name]).toEqual([
            hashed,
            hashed,
            hashed,
          ]);
          expect(createdEvent.details.after).toMatchObject({
            email: expect.stringMatching(HASH),
            displayName: expect.stringMatching(HASH),
            groups: [],
            disabled: false,
          });
          expect(createdEvent.details.after?.email).not.toBe(hashed);
          expect(linkedEvent.details.objectId).toMatch(/^corp:hmac-sha256:[A-Za-z0-9_-]{43}$/);
          expect(linkedEvent.details.after).toMatchObject({
            provider: 'corp',
            subject: expect.stringMatching(HASH),
          });
          expect(succeeded.address).toMatch(HASH);
          expect(succeeded.userAgent).toMatch(HASH);
          expect(nobody?.actor.name).toMatch(HASH);
          expect(nobody?.actor.name).not.toBe(hashed);
        } else {
          expect(createdEvent.details.after).toMatchObject({
            username: null,
            email: null,
            displayName: null,
            groups: [],
          });
          expect(linkedEvent.details).toMatchObject({
            objectId: 'corp:',
            after: { provider: 'corp', subject: null },
          });
          expect([failed.details.username, succeeded.details.username]).toEqual([null, null]);
          expect(succeeded.actor).toEqual({ kind: 'user', id: succeeded.subject });
          expect(nobody?.actor).toEqual({ kind: 'user', id: null });
          expect([succeeded.address, succeeded.userAgent]).toEqual([null, null]);
        }
        // What is no person's stays: the API key acting, the client, the provider.
        expect(createdEvent.actor).toMatchObject({ kind: 'api-key', name: expect.stringMatching(/^idg_/) });
        expect(succeeded.clientId).toBe(client.clientId);
      } finally {
        await t.close();
      }
    });
  }
});
