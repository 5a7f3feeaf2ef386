import { describe, expect, it } from 'vitest';
import {
  CreatedUser,
  CreateGroupInput,
  CreateUserRequest,
  Group,
  LinkIdentityRequest,
  LoginAttemptQuery,
  PageQuery,
  Password,
  pageOf,
  SetPasswordInput,
  UpdateClusterInput,
  UpdateGroupInput,
  UpdateUserInput,
  UserListQuery,
  UserStatus,
} from '../src/index.js';

const user = {
  id: 'u1',
  username: 'alice',
  email: null,
  displayName: null,
  groups: [],
  disabled: false,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  etag: '"0123456789abcdef"',
};

describe('idgate admin users and groups', () => {
  it('pages: limit 1–500 (default 100) and an opaque cursor', () => {
    expect(PageQuery.parse({})).toEqual({ limit: 100 });
    expect(PageQuery.parse({ limit: '500', cursor: 'YQ' })).toEqual({ limit: 500, cursor: 'YQ' });
    for (const limit of ['0', '501', '1.5', 'x', ''])
      expect(PageQuery.safeParse({ limit }).success).toBe(false);
    const dev = {
      name: 'dev',
      description: null,
      requireMfa: false,
      members: 2,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    };
    expect(pageOf(Group).parse({ items: [dev], nextCursor: null })).toEqual({
      items: [dev],
      nextCursor: null,
    });
    expect(pageOf(Group).safeParse({ items: [] }).success).toBe(false);
  });

  it('filters users by group, status and text, refusing control characters', () => {
    expect(UserListQuery.parse({ group: 'dev', status: 'locked', q: 'ali' })).toEqual({
      limit: 100,
      group: 'dev',
      status: 'locked',
      q: 'ali',
    });
    expect(UserStatus.options).toEqual(['active', 'disabled', 'locked']);
    for (const bad of [{ status: 'gone' }, { q: 'a\u0000b' }, { q: '' }, { group: 'a b' }])
      expect(UserListQuery.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
  });

  it('creates with an optional password and answers a generated one', () => {
    expect(CreateUserRequest.parse({ username: 'alice', password: 'pw' })).toMatchObject({ password: 'pw' });
    expect(CreateUserRequest.safeParse({ username: 'alice', admin: true }).success).toBe(false);
    expect(CreateUserRequest.safeParse({ username: 'alice', displayName: 'A\u0007' }).success).toBe(false);
    expect(CreatedUser.parse({ ...user, password: 'generated' }).password).toBe('generated');
    expect(CreatedUser.safeParse({ ...user, etag: undefined }).success).toBe(false);
    expect(Password.safeParse(12).success).toBe(false);
  });

  it('patches only the fields given, null clearing email and display name', () => {
    expect(UpdateUserInput.parse({ email: null, groups: ['a', 'a'] })).toEqual({
      email: null,
      groups: ['a'],
    });
    for (const bad of [{ username: 'x' }, { email: 'nope' }, { disabled: 'yes' }, { groups: ['system:x'] }])
      expect(UpdateUserInput.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    expect(SetPasswordInput.parse({})).toEqual({});
    expect(SetPasswordInput.safeParse({ password: 'x', extra: 1 }).success).toBe(false);
  });

  it('limits login listings, links identities and counts group members', () => {
    expect(LoginAttemptQuery.parse({})).toEqual({ limit: 20 });
    expect(LoginAttemptQuery.safeParse({ limit: '1001' }).success).toBe(false);
    expect(LinkIdentityRequest.parse({ provider: 'github', subject: '1' })).toEqual({
      provider: 'github',
      subject: '1',
    });
    expect(LinkIdentityRequest.safeParse({ provider: 'github', subject: '' }).success).toBe(false);
    expect(Group.safeParse({ name: 'dev', members: -1 }).success).toBe(false);
  });

  it('takes a group with an optional description, and a change of one naming at least one field', () => {
    expect(CreateGroupInput.parse({ name: 'dev', description: ' Developers ' })).toEqual({
      name: 'dev',
      description: 'Developers',
    });
    expect(CreateGroupInput.safeParse({ name: 'system:x' }).success).toBe(false);
    expect(CreateGroupInput.safeParse({ name: 'dev', members: 1 }).success).toBe(false);
    expect(UpdateGroupInput.parse({ description: null })).toEqual({ description: null });
    expect(UpdateGroupInput.safeParse({}).success).toBe(false);
    expect(UpdateGroupInput.safeParse({ name: 'a b' }).success).toBe(false);
    expect(UpdateClusterInput.parse({ name: 'Live' })).toEqual({ name: 'live' });
    expect(UpdateClusterInput.safeParse({}).success).toBe(false);
    expect(UpdateClusterInput.safeParse({ audience: 'not a uri' }).success).toBe(false);
  });
});
