import { describe, expect, it } from 'vitest';
import type { Connector, ExternalIdentity, UpstreamRecheck } from '../../src/connectors/types.js';
import {
  grantUpstream,
  revalidateUpstream,
  type UpstreamRevalidationContext,
} from '../../src/grants/upstream-revalidation.js';
import type { GrantRecord } from '../../src/model.js';
import { createMemoryStorage } from '../../src/testing.js';
import { manualClock, SECRET } from '../helpers.js';

const INTERVAL = 900;

const identity = (overrides: Partial<ExternalIdentity> = {}): ExternalIdentity => ({
  subject: 'u-100',
  username: 'alice',
  email: 'alice@corp.test',
  emailVerified: true,
  displayName: 'Alice',
  groups: ['engineering'],
  upstreamState: 'upstream-refresh-token-1',
  ...overrides,
});

/** A connector whose re-check answers what the test says, and counts the questions. */
function connector(answer: (state: string) => UpstreamRecheck) {
  const asked: string[] = [];
  const fake: Connector = {
    kind: 'password',
    authenticate: async () => null,
    refresh: async ({ state }) => {
      asked.push(state);
      return answer(state);
    },
  };
  return { fake, asked };
}

async function setUp(answer: (state: string) => UpstreamRecheck, intervalSeconds = INTERVAL) {
  const clock = manualClock();
  const storage = createMemoryStorage();
  const { fake, asked } = connector(answer);
  const now = new Date(clock.now());
  await storage.identities.link({
    provider: 'corp',
    subject: 'u-100',
    userId: 'user-1',
    username: 'alice',
    email: null,
    groups: ['corp:engineering'],
    linkedAt: now,
    lastLoginAt: now,
  });
  const grant: GrantRecord = await storage.grants.create({
    id: 'grant-1',
    userId: 'user-1',
    clientId: 'kubectl',
    scope: ['openid'],
    authTime: now,
    sessionId: null,
    createdAt: now,
    expiresAt: new Date(clock.now() + 86_400_000),
    revokedAt: null,
    upstream: await grantUpstream('corp', identity(), SECRET, now),
  });
  const warnings: string[] = [];
  const context: UpstreamRevalidationContext = {
    clock,
    intervalSeconds,
    secret: SECRET,
    storage,
    provider: async (name) => (name === 'corp' ? { connector: fake, groupsPrefix: 'corp:' } : undefined),
    onUnavailable: (_grant, reason) => warnings.push(reason),
  };
  const reload = async () => (await storage.grants.findById(grant.id)) as GrantRecord;
  return { clock, storage, grant, context, asked, warnings, reload };
}

describe('upstream re-validation of a grant on refresh', () => {
  it('seals the upstream state: the grant never holds the upstream token in clear', async () => {
    const { grant } = await setUp(() => ({ status: 'valid', identity: identity() }));
    expect(grant.upstream?.sealedState).toMatch(/^v1\./);
    expect(grant.upstream?.sealedState).not.toContain('upstream-refresh-token-1');
  });

  it('asks nothing upstream within the interval, and never with an interval of 0', async () => {
    const { clock, grant, context, asked } = await setUp(() => ({ status: 'valid', identity: identity() }));
    clock.advance(INTERVAL - 1);
    expect(await revalidateUpstream(grant, context)).toBe('current');
    clock.advance(10 * INTERVAL);
    expect(await revalidateUpstream(grant, { ...context, intervalSeconds: 0 })).toBe('current');
    expect(asked).toEqual([]);
  });

  it('once due, records the groups the upstream gives now and keeps a rotated upstream token', async () => {
    const { clock, storage, context, asked, reload } = await setUp((state) => ({
      status: 'valid',
      identity: identity({ groups: ['platform'], upstreamState: `${state}-rotated` }),
    }));
    clock.advance(INTERVAL);
    expect(await revalidateUpstream(await reload(), context)).toBe('revalidated');
    expect(asked).toEqual(['upstream-refresh-token-1']);
    expect((await storage.identities.find('corp', 'u-100'))?.groups).toEqual(['corp:platform']);
    const after = await reload();
    expect(after.upstream?.validatedAt.getTime()).toBe(clock.now());

    clock.advance(INTERVAL);
    expect(await revalidateUpstream(after, context)).toBe('revalidated');
    expect(asked).toEqual(['upstream-refresh-token-1', 'upstream-refresh-token-1-rotated']);
  });

  it('hands a rotated upstream token to the other grants and the session of the same sign-in', async () => {
    const { clock, storage, grant, context, asked, reload } = await setUp((state) => ({
      status: 'valid',
      identity: identity({ upstreamState: `${state}-rotated` }),
    }));
    // A second grant from the same browser session, and that session: one sealed state for all.
    const shared = grant.upstream ?? null;
    await storage.grants.create({ ...grant, id: 'grant-2', upstream: shared });
    const now = new Date(clock.now());
    const session = {
      id: 'session-1',
      secretHash: 'h',
      userId: 'user-1',
      authTime: now,
      createdAt: now,
      expiresAt: new Date(clock.now() + 86_400_000),
      endedAt: null,
      upstream: shared,
    };
    await storage.sessions.create(session);
    // Another sign-in of the same person holds a token of its own: left alone.
    const other = await grantUpstream('corp', identity({ upstreamState: 'other-sign-in' }), SECRET, now);
    await storage.grants.create({ ...grant, id: 'grant-3', upstream: other });

    clock.advance(INTERVAL);
    expect(await revalidateUpstream(await reload(), context)).toBe('revalidated');
    const rotated = (await reload()).upstream?.sealedState;
    expect(rotated).not.toBe(shared?.sealedState);
    expect((await storage.grants.findById('grant-2'))?.upstream).toStrictEqual({
      ...shared,
      sealedState: rotated,
    });
    expect((await storage.sessions.findById('session-1'))?.upstream?.sealedState).toBe(rotated);
    expect((await storage.grants.findById('grant-3'))?.upstream).toStrictEqual(other);

    // The sibling's own check (as a refresh reads it) presents the token as rotated, not the spent one.
    const sibling = (await storage.grants.findById('grant-2')) as GrantRecord;
    expect(await revalidateUpstream(sibling, context)).toBe('revalidated');
    expect(asked).toEqual(['upstream-refresh-token-1', 'upstream-refresh-token-1-rotated']);
  });

  it('of two concurrent refreshes of one grant, only one asks the upstream', async () => {
    const { clock, grant, context, asked } = await setUp(() => ({ status: 'valid', identity: identity() }));
    clock.advance(INTERVAL);
    const outcomes = await Promise.all([
      revalidateUpstream(grant, context),
      revalidateUpstream(grant, context),
    ]);
    expect(outcomes.sort()).toEqual(['current', 'revalidated']);
    expect(asked).toHaveLength(1);
  });

  it('says gone when the upstream no longer knows the person, or answers for another subject', async () => {
    const gone = await setUp(() => ({ status: 'gone', reason: 'refresh token refused' }));
    gone.clock.advance(INTERVAL);
    expect(await revalidateUpstream(gone.grant, gone.context)).toBe('gone');

    const other = await setUp(() => ({ status: 'valid', identity: identity({ subject: 'u-999' }) }));
    other.clock.advance(INTERVAL);
    expect(await revalidateUpstream(other.grant, other.context)).toBe('gone');
  });

  it('says gone when the provider was removed or disabled', async () => {
    const { clock, grant, context } = await setUp(() => ({ status: 'valid', identity: identity() }));
    clock.advance(INTERVAL);
    expect(await revalidateUpstream(grant, { ...context, provider: async () => undefined })).toBe('gone');
  });

  it('keeps the grant when the upstream is unavailable, warning once per interval', async () => {
    const { clock, context, warnings, storage, reload } = await setUp(() => ({
      status: 'unavailable',
      reason: 'the identity provider did not answer',
    }));
    clock.advance(INTERVAL);
    expect(await revalidateUpstream(await reload(), context)).toBe('unavailable');
    expect(await revalidateUpstream(await reload(), context)).toBe('current');
    expect(warnings).toEqual(['the identity provider did not answer']);
    expect((await storage.identities.find('corp', 'u-100'))?.groups).toEqual(['corp:engineering']);
    clock.advance(INTERVAL);
    expect(await revalidateUpstream(await reload(), context)).toBe('unavailable');
    expect(warnings).toHaveLength(2);
  });

  describe('the limit on refreshes the upstream has not confirmed (maxStalenessSeconds)', () => {
    const MAX = 86_400;
    /** An upstream that answers what `now.answer` says at each check. */
    async function limited() {
      const now: { answer: UpstreamRecheck } = {
        answer: { status: 'unavailable', reason: 'connect ECONNREFUSED 127.0.0.1:1' },
      };
      const set = await setUp(() => now.answer);
      const outcomes: string[] = [];
      const context: UpstreamRevalidationContext = {
        ...set.context,
        maxStalenessSeconds: MAX,
        onUnavailable: (_grant, _reason, outcome) => outcomes.push(outcome),
      };
      return { ...set, now, context, outcomes };
    }

    it('keeps an unreachable upstream unconfirmed until the limit, then answers unconfirmed', async () => {
      const { clock, context, reload, asked, outcomes, grant } = await limited();
      const signedIn = grant.upstream?.validatedAt.getTime() ?? 0;
      clock.advance(INTERVAL);
      expect(await revalidateUpstream(await reload(), context)).toBe('unavailable');
      clock.advance(MAX - INTERVAL);
      expect(clock.now() - signedIn).toBe(MAX * 1000);
      expect(await revalidateUpstream(await reload(), context)).toBe('unavailable');
      // Past the limit a second after a failed check: asked again at once, not an interval later.
      clock.advance(1);
      expect(await revalidateUpstream(await reload(), context)).toBe('unconfirmed');
      expect(asked).toHaveLength(3);
      expect(outcomes).toEqual(['unavailable', 'unavailable', 'unconfirmed']);
      // Never vouched for since the sign-in: the record says so.
      expect((await reload()).upstream?.validatedAt.getTime()).toBe(signedIn);
    });

    it('counts from the last re-check the upstream answered', async () => {
      const { clock, context, reload, now } = await limited();
      clock.advance(MAX - 60);
      expect(await revalidateUpstream(await reload(), context)).toBe('unavailable');
      now.answer = { status: 'valid', identity: identity() };
      clock.advance(INTERVAL);
      expect(await revalidateUpstream(await reload(), context)).toBe('revalidated');
      expect((await reload()).upstream?.validatedAt.getTime()).toBe(clock.now());
      now.answer = { status: 'unavailable', reason: 'the identity provider answered 503' };
      clock.advance(MAX);
      expect(await revalidateUpstream(await reload(), context)).toBe('unavailable');
      clock.advance(1);
      expect(await revalidateUpstream(await reload(), context)).toBe('unconfirmed');
    });

    it('past the limit an upstream that answers confirms the grant again', async () => {
      const { clock, context, reload, now } = await limited();
      clock.advance(MAX + 3600);
      now.answer = { status: 'valid', identity: identity() };
      expect(await revalidateUpstream(await reload(), context)).toBe('revalidated');
      expect((await reload()).upstream?.validatedAt.getTime()).toBe(clock.now());
    });

    it('has no limit at 0, and none for a grant that keeps nothing to check with', async () => {
      const { clock, context, reload, grant, storage } = await limited();
      clock.advance(10 * MAX);
      expect(await revalidateUpstream(await reload(), { ...context, maxStalenessSeconds: 0 })).toBe(
        'unavailable',
      );
      const upstream = grant.upstream ?? null;
      if (upstream === null) throw new Error('the grant has an upstream');
      const stateless = { ...grant, id: 'grant-2', upstream: { ...upstream, sealedState: null } };
      await storage.grants.create(stateless);
      expect(await revalidateUpstream(stateless, context)).toBe('current');
    });
  });

  it('treats a state sealed with another secret as unavailable, not as gone', async () => {
    const { clock, grant, context, asked } = await setUp(() => ({ status: 'valid', identity: identity() }));
    clock.advance(INTERVAL);
    const otherSecret = 'another-secret-that-is-at-least-32-characters';
    expect(await revalidateUpstream(grant, { ...context, secret: otherSecret })).toBe('unavailable');
    expect(asked).toEqual([]);
  });

  it('leaves grants without an upstream alone', async () => {
    const { clock, grant, context, asked } = await setUp(() => ({ status: 'gone', reason: 'x' }));
    clock.advance(INTERVAL);
    expect(await revalidateUpstream({ ...grant, upstream: null }, context)).toBe('current');
    expect(asked).toEqual([]);
  });
});
