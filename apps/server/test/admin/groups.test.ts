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
    expect((await admin.listGroups()).items.map((g) => [g.name, g.members, g.description])).toEqual([
      ['Dev', 1, null],
      ['dev', 2, null],
      ['ops', 1, null],
      ['sre', 1, null],
    ]);
    const first = await admin.listGroups({ limit: 3 });
    expect(first.items.map((g) => g.name)).toEqual(['Dev', 'dev', 'ops']);
    const rest = await admin.listGroups({ limit: 3, cursor: first.nextCursor as string });
    expect(rest).toEqual({ items: [await admin.getGroup('sre')], nextCursor: null });
    for (const query of ['limit=0', 'limit=x', 'cursor=%2F%2F']) {
      const response = await raw(`/admin/v1/groups?${query}`);
      expect(response.status, query).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'invalid_group' });
    }
  });

  it('lists the members of a group, paged; an unknown or malformed group is refused', async () => {
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

  it('adds and removes members idempotently, creating a group not there; unknown users and groups are 404', async () => {
    expect((await httpError(admin.getGroup('qa'))).status).toBe(404);
    const added = await admin.addGroupMember('qa', 'DON');
    expect(added.groups).toEqual(['qa']);
    expect(await admin.getGroup('qa')).toMatchObject({ name: 'qa', description: null, members: 1 });
    expect((await admin.addGroupMember('qa', 'don')).groups).toEqual(['qa']);
    expect((await admin.listGroupMembers('qa')).items.map((u) => u.username)).toEqual(['don']);
    expect(await refusal(admin.addGroupMember('qa', 'nobody'))).toEqual([
      404,
      'user_not_found',
      'there is no user nobody',
    ]);

    await admin.removeGroupMember('qa', 'don');
    expect((await admin.getUser('don')).groups).toEqual([]);
    // The group stays, empty, until deleted.
    expect(await admin.listGroupMembers('qa')).toEqual({ items: [], nextCursor: null });
    await admin.removeGroupMember('qa', 'don');
    await admin.deleteGroup('qa');
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

  it('creates a group with no member, describes it, refuses a name taken or malformed', async () => {
    const created = await admin.createGroup({ name: 'auditors', description: 'Read-only auditors' });
    expect(created).toMatchObject({ name: 'auditors', description: 'Read-only auditors', members: 0 });
    expect(await admin.getGroup('auditors')).toEqual(created);
    expect((await admin.listGroups()).items.map((g) => g.name)).toContain('auditors');
    const again = await httpError(admin.createGroup({ name: 'auditors' }));
    expect([again.status, again.problem?.code]).toEqual([409, 'group_exists']);
    const post = (body: string) =>
      raw('/admin/v1/groups', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const located = await post('{"name":"a/b"}');
    expect(located.status).toBe(201);
    expect(located.headers.get('location')).toBe(`${t.baseUrl}/admin/v1/groups/a%2Fb`);
    for (const body of [
      '{"name":"system:masters"}',
      '{"name":"a b"}',
      '{"name":"x","description":""}',
      '{"name":"x","members":3}',
      '{}',
    ]) {
      const response = await post(body);
      expect(response.status, body).toBe(400);
      expect(await response.json(), body).toMatchObject({ code: 'invalid_group' });
    }
    const missing = await httpError(admin.getGroup('nobody-here'));
    expect([missing.status, missing.problem?.code]).toEqual([404, 'group_not_found']);
    await admin.deleteGroup('a/b');
  });

  it('renames a group on every member in one change; tokens and TokenReview name the new group', async () => {
    await admin.createUser({ username: 'eve', groups: ['web', 'dev'] });
    await admin.createUser({ username: 'fay', groups: ['web'] });
    await admin.setUserPassword('eve', 'a long pass phrase 1');
    const client = await t.addClient({ grants: ['password'], trusted: true, scopes: ['openid', 'groups'] });
    const response = await t.fetch(`${t.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        grant_type: 'password',
        username: 'eve',
        password: 'a long pass phrase 1',
        scope: 'openid groups',
      }),
    });
    const { access_token } = (await response.json()) as { access_token: string };
    const reviewer = createIdgateClient({
      baseUrl: t.baseUrl,
      apiKey: await t.addApiKey(['tokenreview']),
      fetch: t.fetch,
    });
    expect((await reviewer.reviewToken(access_token)).status.user?.groups).toEqual(['dev', 'web']);

    const renamed = await admin.updateGroup('web', { name: 'frontend', description: 'Front end' });
    expect(renamed).toMatchObject({ name: 'frontend', description: 'Front end', members: 2 });
    expect((await reviewer.reviewToken(access_token)).status.user?.groups).toEqual(['dev', 'frontend']);
    expect((await admin.getUser('fay')).groups).toEqual(['frontend']);
    expect((await httpError(admin.getGroup('web'))).status).toBe(404);
    expect((await admin.listGroupMembers('frontend')).items.map((u) => u.username)).toEqual(['eve', 'fay']);

    const { items } = await admin.listEvents({ type: 'admin.changed' });
    type Change = { objectKind: string; objectId: string; operation: string | null };
    const group = items.map((e) => e.details as Change).filter((d) => d.objectKind === 'group');
    expect(group.at(-1)).toEqual({
      objectKind: 'group',
      objectId: 'frontend',
      action: 'updated',
      operation: 'rename',
      before: { name: 'web', description: null },
      after: { name: 'frontend', description: 'Front end' },
    });
    // Each member's change is recorded too, naming the user.
    expect(group.filter((d) => d.operation === 'rename' && d.objectId !== 'frontend')).toHaveLength(2);

    const taken = await httpError(admin.updateGroup('frontend', { name: 'dev' }));
    expect([taken.status, taken.problem?.code]).toEqual([409, 'group_exists']);
    expect((await admin.getUser('eve')).groups).toEqual(['frontend', 'dev']);
    const patch = (body: string) =>
      raw('/admin/v1/groups/frontend', {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body,
      });
    for (const body of ['{}', '{"name":"system:x"}', '{"members":1}']) {
      const bad = await patch(body);
      expect(bad.status, body).toBe(400);
      expect(await bad.json(), body).toMatchObject({ code: 'invalid_group' });
    }
    expect(await admin.updateGroup('frontend', { description: null })).toMatchObject({ description: null });
  });

  it('deletes an empty group; one with members only with force, which takes them out', async () => {
    const refused = await httpError(admin.deleteGroup('frontend'));
    expect([refused.status, refused.problem?.code]).toEqual([409, 'group_has_members']);
    expect(refused.problem?.detail).toBe(
      'group frontend has 2 members; take them out first, or delete with force',
    );
    expect((await admin.getGroup('frontend')).members).toBe(2);
    await admin.deleteGroup('frontend', { force: true });
    expect((await admin.getUser('eve')).groups).toEqual(['dev']);
    expect((await admin.getUser('fay')).groups).toEqual([]);
    expect((await httpError(admin.getGroup('frontend'))).status).toBe(404);
    await admin.createGroup({ name: 'empty' });
    await admin.deleteGroup('empty');
    const again = await httpError(admin.deleteGroup('empty'));
    expect([again.status, again.problem?.code]).toEqual([404, 'group_not_found']);
    const { items } = await admin.listEvents({ type: 'admin.changed' });
    expect(items.at(-1)?.details).toMatchObject({
      objectKind: 'group',
      objectId: 'empty',
      action: 'deleted',
    });
  });

  it('keeps a group row for every group a user is created or updated with', async () => {
    await admin.createUser({ username: 'gus', groups: ['brand-new'] });
    expect(await admin.getGroup('brand-new')).toMatchObject({ members: 1, description: null });
    await admin.updateUser('gus', { groups: ['newer'] });
    expect(await admin.getGroup('newer')).toMatchObject({ members: 1 });
    expect(await admin.getGroup('brand-new')).toMatchObject({ members: 0 });
  });

  it('needs users:read to read groups and users:write to change them', async () => {
    const reader = createIdgateAdminClient({
      baseUrl: t.baseUrl,
      apiKey: await t.addApiKey(['users:read']),
      fetch: t.fetch,
    });
    expect((await reader.getGroup('dev')).name).toBe('dev');
    for (const write of [
      reader.createGroup({ name: 'x' }),
      reader.updateGroup('dev', { description: 'x' }),
      reader.deleteGroup('dev'),
    ]) {
      expect((await httpError(write)).status).toBe(403);
    }
  });
});
