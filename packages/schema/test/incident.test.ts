import { describe, expect, it } from 'vitest';
import {
  BlockedAddress,
  ClientGrantInfo,
  ClientSessionInfo,
  InitResult,
  LiftedBlocks,
  NotBefore,
  NotBeforeScope,
  RetireSigningKeyInput,
  SetNotBeforeInput,
  SigningKeyRetirement,
  SourceAddress,
} from '../src/index.js';
import { rejectedAt } from './rejected-at.js';

const at = '2026-01-01T00:00:00.000Z';
const key = { kid: 'k1', alg: 'RS256', state: 'expired', createdAt: at, retiredAt: at, publishedUntil: at };

describe('retiring a signing key', () => {
  it('takes an optional rotate flag and nothing else', () => {
    expect(RetireSigningKeyInput.parse({})).toEqual({});
    expect(RetireSigningKeyInput.parse({ rotate: true })).toEqual({ rotate: true });
    expect(rejectedAt(RetireSigningKeyInput, { rotate: 'yes' })).toEqual(['rotate']);
    expect(rejectedAt(RetireSigningKeyInput, { force: true })).toEqual(['']);
  });

  it('answers the retired key and the one made with it, if any', () => {
    expect(SigningKeyRetirement.parse({ retired: key, created: null })).toEqual({
      retired: key,
      created: null,
    });
    expect(rejectedAt(SigningKeyRetirement, { retired: key })).toEqual(['created']);
  });
});

describe('not-before', () => {
  it('has three scopes', () => {
    expect(NotBeforeScope.options).toEqual(['global', 'client', 'user']);
    expect(rejectedAt(NotBeforeScope, 'tenant')).toEqual(['']);
  });

  it('names a subject for a client or a user, and none for everything', () => {
    expect(SetNotBeforeInput.parse({ scope: 'global' })).toEqual({ scope: 'global' });
    expect(
      SetNotBeforeInput.parse({ scope: 'user', subject: 'alice', before: '2026-01-01T00:00:00Z' }),
    ).toMatchObject({
      scope: 'user',
      subject: 'alice',
    });
    expect(SetNotBeforeInput.safeParse({ scope: 'global', subject: 'x' }).error?.issues[0]?.message).toBe(
      'a global not-before names no subject',
    );
    expect(SetNotBeforeInput.safeParse({ scope: 'client' }).error?.issues[0]?.message).toBe(
      'a client not-before needs the client id',
    );
    expect(rejectedAt(SetNotBeforeInput, { scope: 'user', subject: 'alice', before: 'yesterday' })).toEqual([
      'before',
    ]);
    expect(rejectedAt(SetNotBeforeInput, { scope: 'user', subject: '' })).toContain('subject');
  });

  it('lists one in force with whom it covers and when', () => {
    const value = { scope: 'global', subject: null, notBefore: at, setAt: at };
    expect(NotBefore.parse(value)).toEqual(value);
    expect(rejectedAt(NotBefore, { ...value, setAt: undefined })).toEqual(['setAt']);
  });
});

describe('blocked addresses', () => {
  it('lists an address with its channel, failures and end', () => {
    const value = { address: '203.0.113.7', channel: 'browser', failures: 100, blockedUntil: at };
    expect(BlockedAddress.parse(value)).toEqual(value);
    expect(rejectedAt(BlockedAddress, { ...value, channel: 'api', failures: -1 })).toEqual([
      'channel',
      'failures',
    ]);
  });

  it.each(['203.0.113.7', '2001:db8::1'])('takes %s as an address', (address) => {
    expect(SourceAddress.parse(address)).toBe(address);
  });

  it.each(['203.0.113.256', 'example.com', '10.0.0.0/8', ''])('refuses %j as an address', (address) => {
    expect(SourceAddress.safeParse(address).success).toBe(false);
  });

  it('answers the addresses a lift freed', () => {
    expect(LiftedBlocks.parse({ lifted: ['203.0.113.7'] })).toEqual({ lifted: ['203.0.113.7'] });
    expect(rejectedAt(LiftedBlocks, { lifted: [7] })).toEqual(['lifted.0']);
  });
});

describe("a client's sessions and grants", () => {
  it('carry the user id beside what a user listing shows', () => {
    const session = {
      id: 's1',
      userId: 'u1',
      createdAt: at,
      lastSeenAt: at,
      expiresAt: at,
      sourceAddress: null,
      userAgent: null,
      clients: [],
    };
    expect(ClientSessionInfo.parse(session)).toEqual(session);
    expect(rejectedAt(ClientSessionInfo, { ...session, userId: undefined })).toEqual(['userId']);
    const grant = ClientGrantInfo.safeParse({ id: 'g1', clientId: 'cl_web', clientName: 'Web' });
    expect(grant.success).toBe(false);
    expect(grant.error?.issues.map((issue) => issue.path.join('.'))).toContain('userId');
  });
});

describe('InitResult with --demo', () => {
  const base = {
    issuer: 'http://localhost:8080/oauth',
    apiKey: 'idg_x_y',
    admin: { username: 'admin', password: 'p' },
    client: { clientId: 'c', clientSecret: 's' },
  };
  const demo = {
    appUrl: 'http://localhost:3000',
    user: { username: 'demo', password: 'p' },
    client: { clientId: 'c2', clientSecret: 's2', redirectUri: 'http://localhost:3000/callback' },
    cluster: { name: 'demo', audience: 'kubernetes:demo', apiKey: 'idg_a_b' },
  };

  it('carries the demo objects, or none', () => {
    expect(InitResult.parse({ ...base, demo })).toEqual({ ...base, demo });
    expect(InitResult.parse(base)).toEqual(base);
  });

  it('refuses a demo missing its cluster key or with extra fields', () => {
    expect(
      rejectedAt(InitResult, { ...base, demo: { ...demo, cluster: { name: 'demo', audience: 'a' } } }),
    ).toEqual(['demo.cluster.apiKey']);
    expect(rejectedAt(InitResult, { ...base, demo: { ...demo, extra: 1 } })).toEqual(['demo']);
  });
});
