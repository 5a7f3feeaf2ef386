import { createHash } from 'node:crypto';
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
  let clientId: string;
  let userId: string;

  beforeAll(async () => {
    t = await startTestApp(kind);
    userId = await t.addUser('rey', 'a sturdy pass phrase!');
    // A public client: no secret to check, so the exchanges reach the code together.
    const client = await t.addClient({
      public: true,
      grants: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'offline_access'],
      redirectUris: [REDIRECT],
    });
    clientId = client.clientId;
  });
  afterAll(async () => t?.close());

  const form = (body: Record<string, string>) => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: clientId, ...body }),
  });
  const token = async (body: Record<string, string>) => {
    const response = await t.fetch(`${t.issuer}/token`, form(body));
    return { status: response.status, body: (await response.json()) as Tokens };
  };

  it('of sixteen exchanges sent together one gets tokens, and the others revoke them', async () => {
    const code = 'a-code-sent-sixteen-times';
    const verifier = 'a-code-verifier-of-forty-three-characters-or-more';
    const now = Date.now();
    await t.services.storage.authorizationCodes.create({
      hash: await hashSecret(code),
      clientId,
      userId,
      redirectUri: REDIRECT,
      scope: ['openid', 'offline_access'],
      nonce: null,
      resource: null,
      codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
      codeChallengeMethod: 'S256',
      authTime: new Date(now),
      sessionId: null,
      grantId: null,
      createdAt: new Date(now),
      expiresAt: new Date(now + 60_000),
      consumedAt: null,
    });
    const answers = await Promise.all(
      Array.from({ length: 16 }, () =>
        token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }),
      ),
    );
    const winners = answers.filter((answer) => answer.status === 200);
    expect(winners).toHaveLength(1);
    expect(answers.filter((answer) => answer.body.error === 'invalid_grant')).toHaveLength(15);

    // Every replay came after the grant was attached to the code: it is revoked.
    const refresh = await token({
      grant_type: 'refresh_token',
      refresh_token: winners[0]?.body.refresh_token as string,
    });
    expect(refresh).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });
});
