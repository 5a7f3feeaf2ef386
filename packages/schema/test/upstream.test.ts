import { describe, expect, it } from 'vitest';
import {
  GitHubEmails,
  GitHubOrganizations,
  GitHubTeams,
  GitHubUser,
  GitLabUser,
  GitLabUserinfo,
  UpstreamTokenResponse,
} from '../src/index.js';
import { rejectedAt } from './rejected-at.js';

describe('upstream token response', () => {
  it('keeps the token and its type, and drops the rest', () => {
    expect(
      UpstreamTokenResponse.parse({ access_token: 'gho_x', token_type: 'bearer', scope: 'read:user' }),
    ).toEqual({ access_token: 'gho_x', token_type: 'bearer' });
  });

  it('refuses a missing or empty token', () => {
    expect(rejectedAt(UpstreamTokenResponse, { token_type: 'bearer' })).toEqual(['access_token']);
    expect(rejectedAt(UpstreamTokenResponse, { access_token: '', token_type: 'bearer' })).toEqual([
      'access_token',
    ]);
  });
});

describe('GitHub API answers', () => {
  it('reads /user with or without a display name', () => {
    expect(GitHubUser.parse({ id: 1, login: 'octocat', name: null, plan: {} })).toEqual({
      id: 1,
      login: 'octocat',
      name: null,
    });
    expect(GitHubUser.parse({ id: 2, login: 'hubot' }).name).toBeUndefined();
  });

  it('refuses an id that is not a positive safe integer, and an empty login', () => {
    expect(rejectedAt(GitHubUser, { id: '1', login: 'octocat' })).toEqual(['id']);
    expect(rejectedAt(GitHubUser, { id: 0, login: 'octocat' })).toEqual(['id']);
    expect(rejectedAt(GitHubUser, { id: 2 ** 53, login: 'octocat' })).toEqual(['id']);
    expect(rejectedAt(GitHubUser, { id: 1, login: '' })).toEqual(['login']);
  });

  it('reads pages of emails, organizations and teams, and points at the bad item', () => {
    expect(
      GitHubEmails.parse([{ email: 'a@b.c', primary: true, verified: false, visibility: null }]),
    ).toEqual([{ email: 'a@b.c', primary: true, verified: false }]);
    expect(rejectedAt(GitHubEmails, [{ email: 'a@b.c', primary: 'yes', verified: true }])).toEqual([
      '0.primary',
    ]);
    expect(GitHubOrganizations.parse([{ login: 'github', id: 1 }])).toEqual([{ login: 'github' }]);
    expect(rejectedAt(GitHubOrganizations, { login: 'github' })).toEqual(['']);
    expect(GitHubTeams.parse([{ slug: 'sre', name: 'SRE', organization: { login: 'acme', id: 9 } }])).toEqual(
      [{ slug: 'sre', organization: { login: 'acme' } }],
    );
    expect(
      rejectedAt(GitHubTeams, [{ slug: 'sre', organization: { login: 'acme' } }, { slug: 'x' }]),
    ).toEqual(['1.organization']);
  });
});

describe('GitLab API answers', () => {
  const user = {
    id: 1,
    username: 'john_smith',
    name: 'John Smith',
    email: 'john@example.com',
    confirmed_at: '2012-05-23T09:05:22Z',
  };

  it('reads /api/v4/user, with null or absent name, email and confirmation', () => {
    expect(GitLabUser.parse({ ...user, state: 'active' })).toEqual(user);
    expect(GitLabUser.parse({ id: 1, username: 'john_smith', email: null, confirmed_at: null })).toEqual({
      id: 1,
      username: 'john_smith',
      email: null,
      confirmed_at: null,
    });
  });

  it('refuses a string id and fields of the wrong type', () => {
    expect(rejectedAt(GitLabUser, { ...user, id: '1' })).toEqual(['id']);
    expect(rejectedAt(GitLabUser, { ...user, email: 42 })).toEqual(['email']);
    expect(rejectedAt(GitLabUser, { ...user, username: undefined })).toEqual(['username']);
  });

  it('reads the groups of userinfo, absent or null meaning none', () => {
    expect(GitLabUserinfo.parse({ sub: '1', groups: ['acme', 'acme/platform'] })).toEqual({
      groups: ['acme', 'acme/platform'],
    });
    expect(GitLabUserinfo.parse({ sub: '1' }).groups).toBeUndefined();
    expect(GitLabUserinfo.parse({ sub: '1', groups: null }).groups).toBeNull();
    expect(rejectedAt(GitLabUserinfo, { groups: 'acme' })).toEqual(['groups']);
    expect(rejectedAt(GitLabUserinfo, { groups: ['acme', ''] })).toEqual(['groups.1']);
  });
});
