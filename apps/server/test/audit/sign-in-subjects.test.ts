import { AuditEvent, type LoginAttempt } from '@idgate/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envFor, runInProcess } from '../cli/support.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, TEST_SECRET, type TestServer, testClock } from '../helpers/server.js';
import { readForm, UserAgent } from '../helpers/user-agent.js';
import { listedEvents, streamedEvents, tokenEndpoint } from './support.js';

const PASSWORD = 'subject-of-refusal-93b0';
const WINDOW = 900;

// A refused sign-in of an existing account names that account's user as its subject, so that
// `idgate audit --user NAME` finds it; the failure that starts a lockout says so in an event of its
// own. Over real HTTP on SQLite and PostgreSQL, read back through the admin API, the CLI and the
// JSON-lines stream.
describe.each(testDatabaseUrls())('refused sign-ins and lockouts on $name', (kind) => {
  let t: TestServer;
  let adminKey: string;
  let ivyId: string;
  let trusted: { clientId: string; clientSecret: string };
  const clock = testClock();
  const audit = async (args: string[]) => {
    const result = await runInProcess(['audit', ...args, '--json'], {
      env: envFor(t.database.url, { IDGATE_SECRET: TEST_SECRET }),
    });
    expect(result.code, result.stderr).toBe(0);
    return result.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => AuditEvent.parse(JSON.parse(line)));
  };

  beforeAll(async () => {
    t = await startTestServer(
      kind,
      { bruteForce: { maxFailures: 3, windowSeconds: WINDOW, maxFailuresPerAddress: 1000 } },
      { clock },
    );
    adminKey = await t.addApiKey(['admin']);
    ivyId = await t.addUser('ivy', PASSWORD);
    await t.addUser('jon', PASSWORD);
    trusted = await t.addClient({ trusted: true, grants: ['password'], scopes: ['openid'] });
  });
  afterAll(async () => t?.close());

  it('names the user of a wrong password and of a disabled account, so `--user` finds them', async () => {
    const token = tokenEndpoint(t, trusted);
    expect((await token({ grant_type: 'password', username: 'IVY', password: 'not it' })).status).toBe(400);
    // On the login page too.
    const browser = new UserAgent();
    const page = await browser.request(`${t.issuer}/login`);
    const { action, fields } = readForm(await page.text());
    const refused = await browser.request(new URL(action, t.issuer), {
      form: { ...fields, username: 'ivy', password: 'nor this' },
    });
    expect(refused.status).toBe(401);
    // Nobody is called ghost: refused alike, and named by nobody.
    expect((await token({ grant_type: 'password', username: 'ghost', password: 'x' })).status).toBe(400);

    const failed = await listedEvents(t, adminKey, { user: 'ivy', type: 'sign-in.failed' });
    expect(failed.map((e) => [e.subject, e.actor, e.details])).toEqual([
      [
        ivyId,
        { kind: 'user', id: null, name: 'ivy' },
        expect.objectContaining({ channel: 'password-grant', reason: 'invalid_credentials' }),
      ],
      [
        ivyId,
        { kind: 'user', id: null, name: 'ivy' },
        expect.objectContaining({ channel: 'browser', reason: 'invalid_credentials' }),
      ],
    ]);
    // Tracing is off here: each event names its request, and no trace.
    expect(failed.map((e) => [typeof e.requestId, e.traceId])).toEqual([
      ['string', null],
      ['string', null],
    ]);
    expect((await audit(['--user', 'ivy', '--type', 'sign-in.failed'])).map((e) => e.id)).toEqual(
      failed.map((e) => e.id),
    );
    const ghost = (await listedEvents(t, adminKey, { type: 'sign-in.failed' })).filter(
      (e) => e.type === 'sign-in.failed' && e.details.username === 'ghost',
    );
    expect(ghost.map((e) => e.subject)).toEqual([null]);

    // A disabled account refused after its password proved right: its user too.
    const disable = await fetch(`${t.baseUrl}/admin/v1/users/jon`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ disabled: true }),
    });
    expect(disable.status).toBe(200);
    expect((await token({ grant_type: 'password', username: 'jon', password: PASSWORD })).status).toBe(400);
    const [disabled] = await listedEvents(t, adminKey, { user: 'jon', type: 'sign-in.failed' });
    expect(disabled).toMatchObject({ details: { reason: 'disabled' } });
    expect(disabled?.subject).toEqual(expect.any(String));
  });

  it('records the lockout the third failure starts, once, and names the user of each locked sign-in', async () => {
    clock.advance((WINDOW + 1) * 1000);
    const since = new Date(clock.now()).toISOString();
    const token = tokenEndpoint(t, trusted);
    for (let i = 0; i < 3; i++) {
      const failed = await token({ grant_type: 'password', username: 'ivy', password: `wrong ${i}` });
      expect(failed.status).toBe(400);
    }
    const locked = await token({ grant_type: 'password', username: 'ivy', password: PASSWORD });
    expect(locked.status).toBe(429);
    expect((await token({ grant_type: 'password', username: 'ivy', password: 'again' })).status).toBe(429);

    const events = await listedEvents(t, adminKey, { user: 'ivy', since });
    expect(events.map((e) => [e.type, e.outcome, e.subject])).toEqual([
      ['sign-in.failed', 'failure', ivyId],
      ['sign-in.failed', 'failure', ivyId],
      ['sign-in.failed', 'failure', ivyId],
      ['lockout.started', 'failure', ivyId],
      ['sign-in.locked', 'failure', ivyId],
      ['sign-in.locked', 'failure', ivyId],
    ]);
    // The lock lasts a window from the failure that set it, as the sign-in records show it.
    const logins = await fetch(`${t.baseUrl}/admin/v1/users/ivy/logins?limit=5`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    const attempts = ((await logins.json()) as { items: LoginAttempt[] }).items;
    expect(attempts.map((a) => a.reason)).toEqual([
      'locked',
      'locked',
      'invalid_credentials',
      'invalid_credentials',
      'invalid_credentials',
    ]);
    const third = Date.parse(attempts[2]?.createdAt ?? '');
    const started = events[3];
    expect(started).toMatchObject({
      actor: { kind: 'system', id: null },
      clientId: trusted.clientId,
      address: '127.0.0.1',
      details: {
        scope: 'account',
        provider: 'password',
        username: 'ivy',
        lockedUntil: new Date(third + WINDOW * 1000).toISOString(),
      },
    });
    // The JSON-lines stream has it as stored; the CLI finds it by type.
    expect(streamedEvents(t).find((e) => e.id === started?.id)).toEqual(JSON.parse(JSON.stringify(started)));
    expect((await audit(['--user', 'ivy', '--type', 'lockout.started'])).map((e) => e.id)).toEqual([
      started?.id,
    ]);
  });
});
