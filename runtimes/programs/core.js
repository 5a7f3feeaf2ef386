// Runs idgate's core through its public API on whatever runtime executes this file (Node, Bun,
// Deno, a browser), over the in-memory ports: a client_credentials token issued, verified, reviewed, and a
// tampered copy refused. Plain JavaScript importing the built packages, as a user would.
import {
  generateSigningKey,
  handleTokenRequest,
  KeyRing,
  registerClient,
  reviewToken,
  systemClock,
  verifyAccessToken,
} from '@idgate/core';
import { createMemoryStorage, insecureTestPasswordHasher } from '@idgate/core/testing';

const runtime = globalThis.Deno
  ? `deno ${globalThis.Deno.version.deno}`
  : globalThis.Bun
    ? `bun ${globalThis.Bun.version}`
    : globalThis.process?.versions?.node
      ? `node ${globalThis.process.versions.node}`
      : 'a browser';

function check(condition, what) {
  if (!condition) throw new Error(what);
}

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

  const context = {
    issuer,
    keys,
    clock,
    findClient: (id) => storage.clients.findById(id),
    passwords: {
      findUserByUsername: (username) => storage.users.findByUsername(username),
      hasher,
      dummyHash: await hasher.hash('dummy'),
    },
    storage,
    lifetimes: { idToken: 3600, grant: 86_400, maxAccessToken: 3600 },
  };
  const basic = `Basic ${btoa(`${client.clientId}:${clientSecret}`)}`;
  const response = await handleTokenRequest(
    { grant_type: 'client_credentials', scope: 'api' },
    basic,
    context,
  );
  check(response.token_type === 'Bearer' && response.scope === 'api', 'the token response');
  const token = response.access_token;

  const verified = await verifyAccessToken(keys, issuer, token, clock);
  check(verified.ok && verified.claims.sub === client.clientId, 'the access token verifies');
  const header = token.split('.')[0] ?? '';
  check(JSON.parse(atob(header.replace(/-/g, '+').replace(/_/g, '/'))).alg === 'RS256', 'RS256');

  const reviewContext = {
    issuer,
    keys,
    clock,
    findUser: (id) => storage.users.findById(id),
    findClient: (id) => storage.clients.findById(id),
    isRevoked: (kind, value) => storage.revocations.isRevoked(kind, value, new Date(clock.now())),
  };
  /** @type {(presented: string) => import('@idgate/schema').TokenReviewRequest} */
  const review = (presented) => ({
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    spec: { token: presented },
  });
  const answer = await reviewToken(review(token), reviewContext);
  check(
    answer.status.authenticated === true && answer.status.user?.username === `client:${client.clientId}`,
    'the TokenReview authenticates the client',
  );

  // One character of the signature changed: the signature no longer matches.
  const last = token.at(-2) === 'A' ? 'B' : 'A';
  const tampered = `${token.slice(0, -2)}${last}${token.at(-1)}`;
  const refused = await verifyAccessToken(keys, issuer, tampered, clock);
  check(!refused.ok && refused.reason === 'bad_signature', 'a tampered token is refused');
  const denied = await reviewToken(review(tampered), reviewContext);
  check(denied.status.authenticated === false, 'the TokenReview refuses a tampered token');

  const events = await storage.auditEvents.list({ limit: 10 });
  check(
    events.some((event) => event.type === 'token.issued'),
    'the issued token is in the audit trail',
  );
}

try {
  await main();
  console.log(`OK core on ${runtime}`);
} catch (error) {
  console.log(`FAIL core on ${runtime}: ${error instanceof Error ? error.stack : String(error)}`);
  globalThis.process?.exit?.(1);
  globalThis.Deno?.exit(1);
}
