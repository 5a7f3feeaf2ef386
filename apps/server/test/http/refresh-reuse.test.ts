import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { testClock } from '../helpers/harness.js';

type Tokens = { access_token: string; refresh_token?: string; error?: string; error_description?: string };

// Two tabs, two kubectl processes: the same refresh token presented twice at once must not sign
// the user out, while a token stolen and replayed later still revokes the grant.
describe.each(testDatabaseUrls())('concurrent refresh on $name', (kind) => {
  const clock = testClock();
  let t: TestApp;
  let basic: string;

  beforeAll(async () => {
    t = await startTestApp(kind, { tokens: { refreshReuseWindow: 10 } }, { clock });
    await t.addUser('rey', 'a sturdy pass phrase!');
    const client = await t.addClient({
      trusted: true,
      grants: ['password', 'refresh_token'],
      scopes: ['openid', 'offline_access'],
    });
    basic = `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`;
  });
  afterAll(async () => t?.close());

  const token = async (body: Record<string, string>) => {
    const response = await t.fetch(`${t.issuer}/token`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body),
    });
    return { status: response.status, body: (await response.json()) as Tokens };
  };
  const signIn = async () => {
    const { body } = await token({
      grant_type: 'password',
      username: 'rey',
      password: 'a sturdy pass phrase!',
      scope: 'openid offline_access',
    });
    return body.refresh_token as string;
  };
  const refresh = (refreshToken: string) =>
    token({ grant_type: 'refresh_token', refresh_token: refreshToken });

  it('five refreshes of one token sent together all succeed with the same new refresh token', async () => {
    const first = await signIn();
    const answers = await Promise.all(Array.from({ length: 5 }, () => refresh(first)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const successors = new Set(answers.map((a) => a.body.refresh_token));
    expect(successors.size).toBe(1);
    // The grant survives: the successor refreshes on.
    const next = await refresh([...successors][0] as string);
    expect(next.status).toBe(200);
    expect(await refresh(next.body.refresh_token as string)).toMatchObject({ status: 200 });
  });

  it('the same token after the window revokes the grant', async () => {
    const first = await signIn();
    const a = await refresh(first);
    clock.advance(11_000);
    expect(await refresh(first)).toMatchObject({
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description: 'the refresh token was already used; the grant is revoked',
      },
    });
    expect((await refresh(a.body.refresh_token as string)).body.error).toBe('invalid_grant');
  });
});
