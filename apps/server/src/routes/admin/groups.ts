import {
  addGroupMember,
  listGroupMembers,
  listGroups,
  removeGroupMember,
  userView,
} from '@idgate/core/admin';
import { Group, PageQuery, pageOf, User } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { adminScope } from './scope.js';

const BASE = '/admin/v1/groups';
const TAGS = ['groups'];

const GroupParams = z.object({ group: z.string() });
const MemberParams = GroupParams.extend({ username: z.string() });

const BAD_GROUP = { description: 'a malformed group name', problem: ['invalid_group'] } as const;

/**
 * The admin REST API of groups, under `/admin/v1/groups`. A group is the union of users' groups:
 * it exists while a user is in it. Listing counts members in storage; adding and removing a
 * member changes the user, which every replica's token review hears of through the change log.
 */
export async function adminGroupRoutes(app: FastifyInstance): Promise<void> {
  const { route } = adminScope(app, 'group');

  app.get(
    BASE,
    route(
      {
        operationId: 'listGroups',
        scope: 'users:read',
        summary: 'List groups',
        description: 'A page of groups by name, each with how many users are in it.',
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
          404: { description: 'no user is in the group', problem: ['group_not_found'] },
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
        description: 'Idempotent: a member stays a member.',
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
