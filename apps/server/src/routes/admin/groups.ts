import {
  addGroupMember,
  createGroup,
  deleteGroup,
  getGroup,
  listGroupMembers,
  listGroups,
  removeGroupMember,
  updateGroup,
  userView,
} from '@idgate/core/admin';
import { CreateGroupInput, Group, PageQuery, pageOf, UpdateGroupInput, User } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { refuseControlCharacters } from './body-strings.js';
import { adminScope } from './scope.js';

const BASE = '/admin/v1/groups';
const TAGS = ['groups'];

const GroupParams = z.object({ group: z.string() });
const MemberParams = GroupParams.extend({ username: z.string() });

const DeleteQuery = z.object({
  force: z
    .enum(['true', 'false'])
    .optional()
    .describe('`true` deletes a group with members too, taking every member out of it'),
});

const BAD_GROUP = { description: 'a malformed group name', problem: ['invalid_group'] } as const;
const NOT_FOUND = { description: 'there is no such group', problem: ['group_not_found'] } as const;

/**
 * The admin REST API of groups, under `/admin/v1/groups`. A group is an object of its own (name,
 * description), which exists with no member too; its members are the users whose groups name it.
 * Adding a member to a group that does not exist creates it. Renaming or deleting a group changes
 * every member, in one transaction; each is a change of a user, which every replica's token review
 * hears of through the change log.
 */
export async function adminGroupRoutes(app: FastifyInstance): Promise<void> {
  const { route, root } = adminScope(app, 'group');

  app.get(
    BASE,
    route(
      {
        operationId: 'listGroups',
        scope: 'users:read',
        summary: 'List groups',
        description: 'A page of groups by name (empty ones too), each with how many users are in it.',
        tags: TAGS,
        query: PageQuery,
        responses: {
          200: { description: 'a page of groups', json: pageOf(Group) },
          400: { description: 'a bad limit or cursor', problem: ['invalid_group'] },
        },
      },
      ({ query }, request) => listGroups(request.admin, query),
    ),
  );

  app.post(
    BASE,
    route(
      {
        operationId: 'createGroup',
        scope: 'users:write',
        summary: 'Create a group',
        description: 'A group with no member yet, and optionally a description. Recorded as `admin.changed`.',
        tags: TAGS,
        body: { json: CreateGroupInput },
        responses: {
          201: { description: 'the group', json: Group, headers: { Location: 'the URL of the group' } },
          400: { description: 'a field is not valid: the detail names it', problem: ['invalid_group'] },
          409: { description: 'there is a group of that name', problem: ['group_exists'] },
        },
      },
      { json: 'a group', check: (body) => refuseControlCharacters(body, 'group') },
      async (_input, request, reply) => {
        const group = await createGroup(request.admin, request.body, { label: (path) => path || 'body' });
        return reply
          .status(201)
          .header('location', `${root}${BASE}/${encodeURIComponent(group.name)}`)
          .send(group);
      },
    ),
  );

  app.get(
    `${BASE}/:group`,
    route(
      {
        operationId: 'getGroup',
        scope: 'users:read',
        summary: 'A group',
        description: 'The group, its description and how many users are in it.',
        tags: TAGS,
        params: GroupParams,
        responses: { 200: { description: 'the group', json: Group }, 400: BAD_GROUP, 404: NOT_FOUND },
      },
      ({ params }, request) => getGroup(request.admin, params.group),
    ),
  );

  app.patch(
    `${BASE}/:group`,
    route(
      {
        operationId: 'updateGroup',
        scope: 'users:write',
        summary: 'Rename a group or change its description',
        description:
          'A new `name` renames the group on every member in the same transaction: their tokens and TokenReview name the new group from then on. `description` null removes it. Recorded as `admin.changed`.',
        tags: TAGS,
        params: GroupParams,
        body: { json: UpdateGroupInput, required: true },
        responses: {
          200: { description: 'the group as it is now', json: Group },
          400: { description: 'a field is not valid: the detail names it', problem: ['invalid_group'] },
          404: NOT_FOUND,
          409: { description: 'the new name is another group’s', problem: ['group_exists'] },
        },
      },
      { json: 'a change of a group', check: (body) => refuseControlCharacters(body, 'group') },
      ({ params }, request) =>
        updateGroup(request.admin, params.group, request.body, { label: (path) => path || 'body' }),
    ),
  );

  app.delete(
    `${BASE}/:group`,
    route(
      {
        operationId: 'deleteGroup',
        scope: 'users:write',
        summary: 'Delete a group',
        description:
          'A group with members is refused (409 `group_has_members`) unless `force=true`, which takes every member out of it in the same transaction. Recorded as `admin.changed`.',
        tags: TAGS,
        params: GroupParams,
        query: DeleteQuery,
        responses: {
          204: { description: 'deleted' },
          400: BAD_GROUP,
          404: NOT_FOUND,
          409: {
            description: 'the group has members and `force` was not given',
            problem: ['group_has_members'],
          },
        },
      },
      async ({ params, query }, request, reply) => {
        await deleteGroup(request.admin, params.group, { force: query.force === 'true' });
        return reply.status(204).send();
      },
    ),
  );

  app.get(
    `${BASE}/:group/members`,
    route(
      {
        operationId: 'listGroupMembers',
        scope: 'users:read',
        summary: 'List the members of a group',
        tags: TAGS,
        params: GroupParams,
        query: PageQuery,
        responses: {
          200: { description: 'a page of users', json: pageOf(User) },
          400: BAD_GROUP,
          404: NOT_FOUND,
        },
      },
      async ({ params, query }, request) => {
        const page = await listGroupMembers(request.admin, params.group, query);
        return { items: page.items.map(userView), nextCursor: page.nextCursor };
      },
    ),
  );

  app.put(
    `${BASE}/:group/members/:username`,
    route(
      {
        operationId: 'addGroupMember',
        scope: 'users:write',
        summary: 'Put a user in a group',
        description:
          'Idempotent: a member stays a member. A group that does not exist is created (without description).',
        tags: TAGS,
        params: MemberParams,
        responses: {
          200: { description: 'the user', json: User },
          400: BAD_GROUP,
          404: { description: 'there is no such user', problem: ['user_not_found'] },
          409: {
            description: 'the user is in as many groups as a user may be in (200) already',
            problem: ['too_many_groups'],
          },
        },
      },
      async ({ params }, request) => {
        const { user } = await addGroupMember(request.admin, params.group, params.username);
        return userView(user);
      },
    ),
  );

  app.delete(
    `${BASE}/:group/members/:username`,
    route(
      {
        operationId: 'removeGroupMember',
        scope: 'users:write',
        summary: 'Take a user out of a group',
        description: 'Idempotent: a user not in the group stays out of it.',
        tags: TAGS,
        params: MemberParams,
        responses: {
          204: { description: 'the user is not in the group' },
          400: BAD_GROUP,
          404: {
            description: 'no such user, or no such group',
            problem: ['user_not_found', 'group_not_found'],
          },
        },
      },
      async ({ params }, request, reply) => {
        await removeGroupMember(request.admin, params.group, params.username);
        return reply.status(204).send();
      },
    ),
  );
}
