// Runs idgate's core through its public API on whatever runtime executes this file (Node, Bun,
// Deno, a browser), over the in-memory ports: one instance (createIdgate) issues a
// client_credentials token, verifies and reviews it, and refuses a tampered copy. Plain JavaScript
// importing the built packages, as a user would.
import { createIdgate, generateSigningKey, KeyRing, systemClock } from '@idgate/core';
import { registerClient } from '@idgate/core/admin';
import { createMemoryStorage, insecureTestPasswordHasher } from '@idgate/core/testing';
import { check, runProgram } from './program.js';

async function main() {
  const issuer = 'https://id.example.test/oauth';
  const clock = systemClock;
  const storage = createMemoryStorage();
  const hasher = insecureTestPasswordHasher();
  // The sealing secret of the signing key: random, as `idgate init` makes one.
  const secret = crypto.randomUUID() + crypto.randomUUID();
  const key = await generateSigningKey('RS256', secret, new Date(clock.now()));
  await storage.signingKeys.insert(key);
  const keys = await KeyRing.load(await storage.signingKeys.list(), secret, new Date(clock.now()));

  const { client, clientSecret } = await registerClient(
    { storage, clock },
    {
      name: 'runtime check',
      public: false,
      trusted: false,
      redirectUris: [],
      postLogoutRedirectUris: [],
      grantTypes: ['client_credentials'],
      scopes: ['api'],
      audiences: [],
      accessTokenTtl: 600,
      refreshTokenTtl: 3600,
    },
  );
  check(typeof clientSecret === 'string', 'a confidential client gets a secret');

  const idgate = await createIdgate(
    {
      storage,
      hasher,
      keys: () => keys,
      providers: { get: async () => undefined, enabled: async () => [] },
      clock,
    },
    {
      issuer,
      keyPolicy: { alg: 'RS256', secret, maxTokenLifetimeSeconds: 3600 },
      tokens: {
        accessTokenTtl: 600,
        idTokenTtl: 3600,
        refreshTokenTtl: 3600,
        maxAccessTokenTtl: 3600,
        grantTtl: 86_400,
      },
    },
  );
  const basic = `Basic ${btoa(`${client.clientId}:${clientSecret}`)}`;
  const response = await idgate.token({ grant_type: 'client_credentials', scope: 'api' }, basic, {
    address: '192.0.2.1',
  });
  check(response.token_type === 'Bearer' && response.scope === 'api', 'the token response');
  const token = response.access_token;

  const verified = await idgate.verifyAccessToken(token);
  check(verified.ok && verified.claims.sub === client.clientId, 'the access token verifies');
  const header = token.split('.')[0] ?? '';
  check(JSON.parse(atob(header.replace(/-/g, '+').replace(/_/g, '/'))).alg === 'RS256', 'RS256');

  /** @type {(presented: string) => import('@idgate/schema').TokenReviewRequest} */
  const review = (presented) => ({
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    spec: { token: presented },
  });
  const answer = await idgate.reviewToken(review(token));
  check(
    answer.status.authenticated === true && answer.status.user?.username === `client:${client.clientId}`,
    'the TokenReview authenticates the client',
  );

  // One character of the signature changed: the signature no longer matches.
  const last = token.at(-2) === 'A' ? 'B' : 'A';
  const tampered = `${token.slice(0, -2)}${last}${token.at(-1)}`;
  const refused = await idgate.verifyAccessToken(tampered);
  check(!refused.ok && refused.reason === 'bad_signature', 'a tampered token is refused');
  const denied = await idgate.reviewToken(review(tampered));
  check(denied.status.authenticated === false, 'the TokenReview refuses a tampered token');

  const events = await storage.auditEvents.list({ limit: 10 });
  check(
    events.some((event) => event.type === 'token.issued'),
    'the issued token is in the audit trail',
  );
}

await runProgram('core', main);
