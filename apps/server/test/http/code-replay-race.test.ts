import { hashSecret } from '@idgate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';

type Tokens = { access_token?: string; refresh_token?: string; error?: string };

const REDIRECT = 'https://app.example.com/cb';

// RFC 6749 §4.1.2: a code is used once, and a replay revokes what it produced. A replay sent while
// the first exchange is still under way must find that grant too: the exchange is one transaction,
// and a replay waits for it instead of seeing the code consumed but not yet pointing at its grant.
describe.each(testDatabaseUrls())('authorization code replayed during its exchange on $name', (kind) => {
  let t: TestApp;
  let basic: string;
  let clientId: string;
  let userId: string;

  beforeAll(async () => {
    t = await startTestApp(kind);
    userId = await t.addUser('rey', 'a sturdy pass phrase!');
    const client = await t.addClient({
      grants: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'offline_access'],
      redirectUris: [REDIRECT],
    });
    clientId = client.clientId;
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

  it('of eight exchanges sent together one gets tokens, and the others revoke them', async () => {
    const code = 'a-code-sent-eight-times';
    const now = Date.now();
    await t.services.storage.authorizationCodes.create({
      hash: await hashSecret(code),
      clientId,
      userId,
      redirectUri: REDIRECT,
      scope: ['openid', 'offline_access'],
      nonce: null,
      resource: null,
      codeChallenge: null,
      codeChallengeMethod: null,
      authTime: new Date(now),
      sessionId: null,
      grantId: null,
      createdAt: new Date(now),
      expiresAt: new Date(now + 60_000),
      consumedAt: null,
    });
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }),
      ),
    );
    const winners = answers.filter((answer) => answer.status === 200);
    expect(winners).toHaveLength(1);
    expect(answers.filter((answer) => answer.body.error === 'invalid_grant')).toHaveLength(7);

    // Every replay came after the grant was attached to the code: it is revoked.
    const refresh = await token({
      grant_type: 'refresh_token',
      refresh_token: winners[0]?.body.refresh_token as string,
    });
    expect(refresh).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const introspection = await t.fetch(`${t.issuer}/introspect`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: winners[0]?.body.access_token as string }),
    });
    expect(await introspection.json()).toEqual({ active: false });
  });
});
