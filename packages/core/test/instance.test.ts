import { describe, expect, it } from 'vitest';
import { ConnectorError } from '../src/connectors/types.js';
import { createIdgate } from '../src/instance/idgate.js';
import type { IdgatePolicy, ReadCache } from '../src/instance/ports.js';
import type { RequestLog } from '../src/ports/caller.js';
import type { IdentityProvider, IdentityProviders } from '../src/sign-in/providers.js';
import { seededRandom } from '../src/testing.js';
import { client, ISSUER, keyRing, manualClock, SECRET, seededStorage } from './helpers.js';

const noProviders: IdentityProviders = { get: async () => undefined, enabled: async () => [] };
const policy: IdgatePolicy = {
  issuer: ISSUER,
  keyPolicy: { alg: 'ES256', secret: SECRET, maxTokenLifetimeSeconds: 3600 },
  tokens: {
    accessTokenTtl: 600,
    idTokenTtl: 600,
    refreshTokenTtl: 86_400,
    maxAccessTokenTtl: 3600,
    grantTtl: 86_400 * 90,
  },
};

async function instance(options: { cache?: ReadCache; seed?: string; providers?: IdentityProviders } = {}) {
  const clock = manualClock();
  const ring = await keyRing('ES256', clock);
  const { storage, hasher } = await seededStorage();
  await storage.clients.create(
    client({
      public: true,
      grantTypes: ['password', 'refresh_token'],
      scopes: ['openid', 'profile', 'groups', 'offline_access'],
    }),
  );
  const idgate = await createIdgate(
    {
      storage,
      hasher,
      keys: () => ring,
      providers: options.providers ?? noProviders,
      clock,
      ...(options.seed === undefined ? {} : { random: seededRandom(options.seed) }),
      ...(options.cache === undefined ? {} : { cache: options.cache }),
    },
    policy,
  );
  return { idgate, storage, clock };
}

const passwordGrant = {
  grant_type: 'password',
  client_id: 'cli',
  username: 'alice',
  password: 'correct horse',
};

describe('createIdgate', () => {
  it('builds the token endpoint once; the caller of each request is an argument of the call', async () => {
    const { idgate, storage } = await instance();
    await idgate.token(passwordGrant, undefined, { address: '198.51.100.1' });
    await idgate.token(passwordGrant, undefined, { address: '198.51.100.2' });
    const attempts = await storage.loginAttempts.listByUsername('alice', 10);
    expect(attempts.map((attempt) => attempt.sourceAddress).sort()).toEqual(['198.51.100.1', '198.51.100.2']);
  });

  it("tells the request's own log why a directory could not be asked, and answers temporarily_unavailable", async () => {
    const corp: IdentityProvider = {
      config: { name: 'corp', type: 'ldap', disabled: false, mapping: 'auto' } as IdentityProvider['config'],
      source: 'config',
      groupsPrefix: 'corp:',
      connector: {
        kind: 'password',
        authenticate: async () => {
          throw new ConnectorError('upstream_unavailable', 'the directory did not answer');
        },
      },
    };
    const { idgate } = await instance({ providers: { get: async () => corp, enabled: async () => [corp] } });
    const heard = (): { messages: string[]; log: RequestLog } => {
      const messages: string[] = [];
      return { messages, log: { info: () => {}, warn: (_fields, message) => messages.push(message) } };
    };
    const [first, second] = [heard(), heard()];
    const answer = idgate.token({ ...passwordGrant, provider: 'corp' }, undefined, {
      address: 'x',
      log: first.log,
    });
    await expect(answer).rejects.toMatchObject({ code: 'temporarily_unavailable' });
    await idgate.token(passwordGrant, undefined, { address: 'x', log: second.log });
    expect(first.messages).toEqual(['directory sign-in failed']);
    expect(second.messages).toEqual([]);
  });

  it('reviews a token it issued, reading the user as tokens describe them through the cache', async () => {
    const subjects: string[] = [];
    const verified: string[] = [];
    const cache: ReadCache = {
      subject: (id, load) => {
        subjects.push(id);
        return load(id);
      },
      verification: (token, verify) => {
        verified.push(token);
        return verify(token);
      },
      apiKey: () => undefined,
      rememberApiKey: () => {},
    };
    const { idgate, storage, clock } = await instance({ cache });
    const { access_token } = await idgate.token(passwordGrant, undefined, { address: 'x' });
    const review = await idgate.reviewToken({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: access_token },
    });
    expect(review.status.authenticated).toBe(true);
    expect(subjects).toContain('u-alice');
    expect(verified).toEqual([access_token]);
    await storage.users.update('u-alice', { disabled: true, updatedAt: new Date(clock.now()) });
    const again = await idgate.reviewToken({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: access_token },
    });
    expect(again.status).toEqual({ authenticated: false, error: 'user is disabled' });
  });

  it('records audit events that sort in the order they were made, across calls in one millisecond', async () => {
    const { idgate, storage } = await instance();
    for (let i = 0; i < 5; i++) await idgate.token(passwordGrant, undefined, { address: `a${i}` });
    const events = await storage.auditEvents.list({ limit: 100 });
    const issued = events.filter((event) => event.type === 'token.issued').map((event) => event.address);
    expect(issued).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
  });

  it('draws every token from the random source it is given', async () => {
    const first = await instance({ seed: 'same' });
    const second = await instance({ seed: 'same' });
    const refresh = async (idgate: typeof first.idgate) =>
      (await idgate.token({ ...passwordGrant, scope: 'openid offline_access' }, undefined, { address: 'x' }))
        .refresh_token;
    const [a, b] = [await refresh(first.idgate), await refresh(second.idgate)];
    expect(a).toBeDefined();
    expect(a).toBe(b);
    expect(await refresh(first.idgate)).not.toBe(a);
  });
});
