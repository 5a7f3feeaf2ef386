import { createIdgateAdminClient, createIdgateClient, type IdgateAdminClient } from '@idgate/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { httpError } from '../helpers/http-error.js';

async function refusal(promise: Promise<unknown>) {
  const { status, problem } = await httpError(promise);
  return [status, problem?.code, problem?.detail];
}

describe.each(testDatabaseUrls())('admin groups API on $name', (kind) => {
  let t: TestApp;
  let admin: IdgateAdminClient;
  let adminKey: string;
  const raw = (path: string, init: RequestInit = {}) =>
    t.fetch(`${t.baseUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${adminKey}`, ...init.headers },
    });

  beforeAll(async () => {
    t = await startTestApp(kind);
    adminKey = await t.addApiKey(['admin']);
    admin = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: adminKey, fetch: t.fetch });
    await admin.createUser({ username: 'ann', groups: ['dev', 'ops'] });
    await admin.createUser({ username: 'ben', groups: ['dev'] });
    await admin.createUser({ username: 'cat', groups: ['Dev', 'sre'] });
    await admin.createUser({ username: 'don' });
  });
  afterAll(async () => t?.close());

  it('lists groups with their member counts, a page at a time, by name in byte order', async () => {
    expect((await admin.listGroups()).items).toEqual([
      { name: 'Dev', members: 1 },
      { name: 'dev', members: 2 },
      { name: 'ops', members: 1 },
      { name: 'sre', members: 1 },
    ]);
    const first = await admin.listGroups({ limit: 3 });
    expect(first.items.map((g) => g.name)).toEqual(['Dev', 'dev', 'ops']);
    const rest = await admin.listGroups({ limit: 3, cursor: first.nextCursor as string });
    expect(rest).toEqual({ items: [{ name: 'sre', members: 1 }], nextCursor: null });
    for (const query of ['limit=0', 'limit=x', 'cursor=%2F%2F']) {
      const response = await raw(`/admin/v1/groups?${query}`);
      expect(response.status, query).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'invalid_group' });
    }
  });

  it('lists the members of a group, paged; an empty or malformed group is refused', async () => {
    const page = await admin.listGroupMembers('dev', { limit: 1 });
    expect(page.items.map((u) => u.username)).toEqual(['ann']);
    const next = await admin.listGroupMembers('dev', { limit: 1, cursor: page.nextCursor as string });
    expect(next).toMatchObject({ items: [{ username: 'ben' }], nextCursor: null });
    expect(await refusal(admin.listGroupMembers('nobody-here'))).toEqual([
      404,
      'group_not_found',
      'there is no group nobody-here',
    ]);
    for (const group of ['a%20b', 'system%3Amasters', 'a%00b']) {
      const response = await raw(`/admin/v1/groups/${group}/members`);
      expect([400, 404], group).toContain(response.status);
      expect(((await response.json()) as { code: string }).code).not.toBe('internal_error');
    }
    const spaced = await raw('/admin/v1/groups/a%20b/members');
    expect(await spaced.json()).toMatchObject({ status: 400, code: 'invalid_group' });
  });

  it('adds and removes members idempotently; unknown users and groups are 404', async () => {
    const added = await admin.addGroupMember('qa', 'DON');
    expect(added.groups).toEqual(['qa']);
    expect((await admin.addGroupMember('qa', 'don')).groups).toEqual(['qa']);
    expect((await admin.listGroupMembers('qa')).items.map((u) => u.username)).toEqual(['don']);
    expect(await refusal(admin.addGroupMember('qa', 'nobody'))).toEqual([
      404,
      'user_not_found',
      'there is no user nobody',
    ]);

    await admin.removeGroupMember('qa', 'don');
    expect((await admin.getUser('don')).groups).toEqual([]);
    expect((await refusal(admin.listGroupMembers('qa'))).slice(0, 2)).toEqual([404, 'group_not_found']);
    expect((await refusal(admin.removeGroupMember('qa', 'don'))).slice(0, 2)).toEqual([
      404,
      'group_not_found',
    ]);
    // A user not in an existing group stays out of it.
    await admin.removeGroupMember('ops', 'ben');
    expect((await admin.getUser('ben')).groups).toEqual(['dev']);
    const bad = await raw('/admin/v1/groups/system%3Anodes/members/ben', { method: 'PUT' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'invalid_group' });
  });

  it('a membership change shows in the next TokenReview', async () => {
    const client = await t.addClient({ grants: ['password'], trusted: true, scopes: ['openid', 'groups'] });
    await admin.setUserPassword('ben', 'the new pass phrase');
    const response = await t.fetch(`${t.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        grant_type: 'password',
        username: 'ben',
        password: 'the new pass phrase',
        scope: 'openid groups',
      }),
    });
    const { access_token } = (await response.json()) as { access_token: string };
    const reviewer = createIdgateClient({
      baseUrl: t.baseUrl,
      apiKey: await t.addApiKey(['tokenreview']),
      fetch: t.fetch,
    });
    expect((await reviewer.reviewToken(access_token)).status.user?.groups).toEqual(['dev']);
    await admin.addGroupMember('platform', 'ben');
    expect((await reviewer.reviewToken(access_token)).status.user?.groups).toEqual(['dev', 'platform']);
    await admin.updateUser('ben', { groups: ['ops'] });
    expect((await reviewer.reviewToken(access_token)).status.user?.groups).toEqual(['ops']);
  });
});
