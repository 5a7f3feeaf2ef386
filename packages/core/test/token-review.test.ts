import type { TokenReviewRequest } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import { OAuthProtocolError } from '../src/errors.js';
import type { ClientRecord } from '../src/model.js';
import {
  reviewToken,
  SERVICE_IDENTITY,
  TOKEN_REVIEW_DENIAL_MESSAGES,
  type TokenReviewContext,
} from '../src/token-review/review.js';
import { ACCESS_TOKEN_REJECTION_MESSAGES, issueAccessToken } from '../src/tokens/access-token.js';
import { checkAccessToken } from '../src/tokens/access-token-check.js';
import { userinfo } from '../src/tokens/userinfo.js';
import { client, ISSUER, keyRing, manualClock, seededStorage } from './helpers.js';

async function setup(clientOverrides: Partial<ClientRecord> = {}) {
  const clock = manualClock();
  const ring = await keyRing('RS256', clock);
  const { storage } = await seededStorage();
  await storage.clients.create(client(clientOverrides));
  const context: TokenReviewContext = {
    issuer: ISSUER,
    keys: ring,
    clock,
    findUser: (id) => storage.users.findById(id),
    findClient: (id) => storage.clients.findById(id),
    isRevoked: (kind, value) => storage.revocations.isRevoked(kind, value, new Date(clock.now())),
  };
  const tokenFor = async (subject: string, audience = ['cli']) =>
    (
      await issueAccessToken(
        ring,
        ISSUER,
        {
          subject,
          clientId: 'cli',
          audience,
          scope: ['openid', 'groups'],
          grantId: 'g1',
          lifetimeSeconds: 600,
        },
        clock,
      )
    ).token;
  return { clock, ring, storage, context, tokenFor };
}

const review = (
  token: string | undefined,
  audiences?: string[],
  apiVersion: TokenReviewRequest['apiVersion'] = 'authentication.k8s.io/v1',
): TokenReviewRequest => ({
  apiVersion,
  kind: 'TokenReview',
  spec: { ...(token === undefined ? {} : { token }), ...(audiences === undefined ? {} : { audiences }) },
});

describe('TokenReview decision', () => {
  it('authenticates an active user with username, stable uid, sorted distinct groups and extra', async () => {
    const { context, tokenFor } = await setup();
    const answer = await reviewToken(review(await tokenFor('u-alice')), context);
    expect(answer).toEqual({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      status: {
        authenticated: true,
        user: {
          username: 'Alice',
          uid: 'u-alice',
          groups: ['dev', 'ops'],
          extra: {
            'idgate.dev/client-id': ['cli'],
            'idgate.dev/scopes': ['openid', 'groups'],
            'idgate.dev/grant-id': ['g1'],
          },
        },
      },
    });
  });

  it('echoes apiVersion v1beta1', async () => {
    const { context, tokenFor } = await setup();
    const answer = await reviewToken(
      review(await tokenFor('u-alice'), undefined, 'authentication.k8s.io/v1beta1'),
      context,
    );
    expect(answer.apiVersion).toBe('authentication.k8s.io/v1beta1');
    expect(answer.status.authenticated).toBe(true);
  });

  it('maps a client acting for itself to the documented service identity', async () => {
    const { context, tokenFor } = await setup();
    const answer = await reviewToken(review(await tokenFor('cli')), context);
    expect(answer.status.user).toMatchObject({
      username: 'client:cli',
      uid: 'client:cli',
      groups: [SERVICE_IDENTITY.group],
    });
  });

  it.each([
    ['missing token', undefined, 'token is missing'],
    ['blank token', '   ', 'token is missing'],
    ['garbage', 'not-a-jwt', 'token is malformed'],
  ])('refuses a %s with a short error', async (_name, token, error) => {
    const { context } = await setup();
    expect((await reviewToken(review(token), context)).status).toEqual({ authenticated: false, error });
  });

  it('refuses an expired token', async () => {
    const { context, tokenFor, clock } = await setup();
    const token = await tokenFor('u-alice');
    clock.advance(601);
    expect((await reviewToken(review(token), context)).status).toEqual({
      authenticated: false,
      error: 'token has expired',
    });
  });

  it('refuses a disabled user, a deleted user and a removed client', async () => {
    const { context, tokenFor, storage } = await setup();
    const token = await tokenFor('u-alice');
    await storage.users.update('u-alice', { disabled: true, updatedAt: new Date() });
    expect((await reviewToken(review(token), context)).status).toEqual({
      authenticated: false,
      error: 'user is disabled',
    });
    expect((await reviewToken(review(await tokenFor('u-ghost')), context)).status.error).toBe(
      'user no longer exists',
    );
    await storage.clients.remove('cli');
    expect((await reviewToken(review(await tokenFor('cli')), context)).status.error).toBe(
      'client no longer exists',
    );
  });

  it('refuses a token revoked by jti or by grant', async () => {
    const { context, tokenFor, storage, clock } = await setup();
    const token = await tokenFor('u-alice');
    const jti = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()).jti;
    await storage.revocations.add({
      kind: 'jti',
      value: jti,
      expiresAt: new Date(clock.now() + 600_000),
      createdAt: new Date(clock.now()),
    });
    expect((await reviewToken(review(token), context)).status).toEqual({
      authenticated: false,
      error: 'token has been revoked',
    });
    const other = await tokenFor('u-alice');
    expect((await reviewToken(review(other), context)).status.authenticated).toBe(true);
    await storage.revocations.add({
      kind: 'sid',
      value: 'g1',
      expiresAt: new Date(clock.now() + 600_000),
      createdAt: new Date(clock.now()),
    });
    expect((await reviewToken(review(other), context)).status.error).toBe('token has been revoked');
  });

  it('decides on rejection codes, and words them from one table', async () => {
    const { context, tokenFor, storage, clock } = await setup();
    const reasonOf = async (token: string) => {
      const checked = await checkAccessToken(token, context);
      return checked.ok ? 'live' : checked.reason;
    };
    const alice = await tokenFor('u-alice');
    expect(await reasonOf(alice)).toBe('live');
    expect(await reasonOf('not-a-jwt')).toBe('malformed');
    expect(await reasonOf(await tokenFor('u-ghost'))).toBe('user_gone');
    await storage.users.update('u-alice', { disabled: true, updatedAt: new Date() });
    expect(await reasonOf(alice)).toBe('user_disabled');

    // Userinfo and TokenReview say the same thing about the same token.
    const refused = await userinfo(alice, context).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OAuthProtocolError);
    expect((refused as OAuthProtocolError).description).toBe(ACCESS_TOKEN_REJECTION_MESSAGES.user_disabled);
    expect((await reviewToken(review(alice), context)).status.error).toBe(
      TOKEN_REVIEW_DENIAL_MESSAGES.user_disabled,
    );

    clock.advance(601);
    expect(await reasonOf(alice)).toBe('expired');
  });

  it('words every denial differently, so a denial can be read back from status.error', () => {
    const messages = Object.values(TOKEN_REVIEW_DENIAL_MESSAGES);
    expect(new Set(messages).size).toBe(messages.length);
  });

  describe('spec.audiences', () => {
    it('answers the intersection for an audience-aware token', async () => {
      const { context, tokenFor } = await setup({
        audiences: ['https://k8s.example', 'https://api.example'],
      });
      const token = await tokenFor('u-alice', ['https://k8s.example', 'https://api.example']);
      const answer = await reviewToken(
        review(token, ['https://k8s.example', 'https://other.example']),
        context,
      );
      expect(answer.status).toMatchObject({ authenticated: true, audiences: ['https://k8s.example'] });
    });

    it('refuses an audience-aware token minted for other audiences', async () => {
      const { context, tokenFor } = await setup({ audiences: ['https://api.example'] });
      const token = await tokenFor('u-alice', ['https://api.example']);
      const answer = await reviewToken(review(token, ['https://k8s.example']), context);
      expect(answer.status).toEqual({ authenticated: false, error: 'token audience does not match' });
    });

    it('authenticates a client-bound token without status.audiences (the API server’s implicit audience)', async () => {
      const { context, tokenFor } = await setup();
      const answer = await reviewToken(review(await tokenFor('u-alice'), ['https://k8s.example']), context);
      expect(answer.status.authenticated).toBe(true);
      expect(answer.status).not.toHaveProperty('audiences');
    });
  });

  it('never echoes the token back', async () => {
    const { context, tokenFor } = await setup();
    const token = await tokenFor('u-alice');
    expect(JSON.stringify(await reviewToken(review(token), context))).not.toContain(token);
  });
});
