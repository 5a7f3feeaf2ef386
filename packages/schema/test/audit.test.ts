import { describe, expect, it } from 'vitest';
import {
  AUDIT_EVENT_SCHEMAS,
  AUDIT_EVENT_TYPES,
  AuditActor,
  AuditEvent,
  AuditEventPage,
  AuditEventQuery,
  AuditEventType,
  AuditOutcome,
} from '../src/index.js';

const envelope = {
  id: '01JD0000000000000000000000',
  occurredAt: '2026-01-01T00:00:00.000Z',
  actor: { kind: 'user', id: 'u1', name: 'alice' },
  subject: 'u1',
  clientId: 'cl_web',
  address: '203.0.113.7',
  userAgent: 'Firefox',
  requestId: 'req-1',
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  outcome: 'success',
} as const;

describe('AuditEvent', () => {
  it('accepts an event of each type with its details', () => {
    const signIn = {
      method: 'password',
      provider: 'password',
      channel: 'browser',
      username: 'alice',
      reason: null,
      groupsDropped: null,
    };
    expect(AuditEvent.parse({ ...envelope, type: 'sign-in.succeeded', details: signIn }).type).toBe(
      'sign-in.succeeded',
    );
    const lockout = AuditEvent.parse({
      ...envelope,
      actor: { kind: 'system', id: null },
      outcome: 'failure',
      type: 'lockout.started',
      details: {
        scope: 'account',
        provider: 'password',
        username: null,
        lockedUntil: '2026-01-01T00:15:00Z',
      },
    });
    expect(lockout).toMatchObject({ requestId: 'req-1', details: { scope: 'account' } });
    const redeemed = AuditEvent.parse({
      ...envelope,
      type: 'code.redeemed',
      details: { codeId: 'Xq3mB0c9zV1yWkL7pRt2aA', grantId: 'g1' },
    });
    expect(redeemed.details).toEqual({ codeId: 'Xq3mB0c9zV1yWkL7pRt2aA', grantId: 'g1' });
    const admin = AuditEvent.parse({
      ...envelope,
      actor: { kind: 'api-key', id: 'k1' },
      type: 'admin.changed',
      details: {
        objectKind: 'user',
        objectId: 'u1',
        action: 'updated',
        operation: null,
        before: { groups: ['a'] },
        after: { groups: ['a', 'b'] },
      },
    });
    expect(admin.details).toMatchObject({ before: { groups: ['a'] } });
  });

  it('reads device and consent events with the resources they covered, and older ones without', () => {
    const approved = AuditEvent.parse({
      ...envelope,
      type: 'device.approved',
      details: { scopes: ['openid'], resources: ['kubernetes:prod'] },
    });
    expect(approved.details).toEqual({ scopes: ['openid'], resources: ['kubernetes:prod'] });
    const older = AuditEvent.parse({ ...envelope, type: 'consent.granted', details: { scopes: ['openid'] } });
    expect(older.details).toEqual({ scopes: ['openid'] });
    const locked = AuditEvent.parse({
      ...envelope,
      actor: { kind: 'user', id: null },
      subject: null,
      outcome: 'failure',
      type: 'device.locked',
      details: { scope: 'all', retryAfterSeconds: 900 },
    });
    expect(locked.details).toEqual({ scope: 'all', retryAfterSeconds: 900 });
    expect(
      AuditEvent.safeParse({
        ...envelope,
        type: 'device.locked',
        details: { scope: 'world', retryAfterSeconds: 1 },
      }).success,
    ).toBe(false);
  });

  it('drops every field a type does not list, in the envelope and in details', () => {
    const parsed = AuditEvent.parse({
      ...envelope,
      password: 'hunter2',
      type: 'token.issued',
      details: {
        grantType: 'authorization_code',
        scopes: ['openid'],
        audience: ['cl_web'],
        jti: 'j1',
        grantId: 'g1',
        accessToken: 'eyJ…',
      },
    });
    expect(JSON.stringify(parsed)).not.toMatch(/hunter2|eyJ/);
    expect(Object.keys(parsed.details).sort()).toEqual(['audience', 'grantId', 'grantType', 'jti', 'scopes']);
  });

  it('refuses an unknown type, a missing detail, a bad actor kind or a bad time', () => {
    expect(AuditEvent.safeParse({ ...envelope, type: 'nope', details: {} }).success).toBe(false);
    expect(AuditEvent.safeParse({ ...envelope, type: 'sign-out', details: {} }).success).toBe(false);
    expect(
      AuditEvent.safeParse({
        ...envelope,
        actor: { kind: 'root', id: null },
        type: 'sign-out',
        details: { grantsRevoked: 0 },
      }).success,
    ).toBe(false);
    expect(
      AuditEvent.safeParse({
        ...envelope,
        occurredAt: 'yesterday',
        type: 'sign-out',
        details: { grantsRevoked: 0 },
      }).success,
    ).toBe(false);
    expect(
      AuditEvent.safeParse({
        ...envelope,
        type: 'refresh.reuse-detected',
        details: { grantId: 'g1', grantRevoked: false },
      }).success,
    ).toBe(false);
  });

  it('lists every type once, each with its schema', () => {
    expect(AUDIT_EVENT_TYPES).toEqual(Object.keys(AUDIT_EVENT_SCHEMAS));
    expect(AUDIT_EVENT_TYPES).toHaveLength(33);
    expect(AuditEventType.options).toEqual(AUDIT_EVENT_TYPES);
    expect(AuditActor.safeParse({ kind: 'cli', id: null }).success).toBe(true);
    expect(AuditOutcome.options).toEqual(['success', 'failure']);
    expect(AuditEventPage.parse({ items: [], nextCursor: null })).toEqual({ items: [], nextCursor: null });
  });
});

describe('AuditEventQuery', () => {
  it('takes one type or several, instants and a page', () => {
    expect(AuditEventQuery.parse({ type: 'sign-out' })).toEqual({ type: ['sign-out'], limit: 100 });
    expect(
      AuditEventQuery.parse({
        user: 'u1',
        type: ['sign-in.failed', 'sign-in.locked'],
        since: '2026-01-01T00:00:00Z',
        until: '2026-02-01T00:00:00+01:00',
        limit: '5',
        cursor: 'abc',
      }),
    ).toEqual({
      user: 'u1',
      type: ['sign-in.failed', 'sign-in.locked'],
      since: '2026-01-01T00:00:00Z',
      until: '2026-02-01T00:00:00+01:00',
      limit: 5,
      cursor: 'abc',
    });
  });

  it('refuses an unknown type, a bad instant and a bad limit', () => {
    expect(AuditEventQuery.safeParse({ type: 'token.stolen' }).success).toBe(false);
    expect(AuditEventQuery.safeParse({ since: 'last week' }).success).toBe(false);
    expect(AuditEventQuery.safeParse({ limit: '0' }).success).toBe(false);
  });
});
