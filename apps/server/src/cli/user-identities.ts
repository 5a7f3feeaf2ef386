import { type LinkedIdentityRecord, type Storage, StorageConflictError, type UserRecord } from '@idgate/core';
import type { Command } from 'commander';
import { z } from 'zod';
import { type CliContext, CliError, parseField, table, when } from './context.js';
import { linkedIdentityView } from './views.js';

const Subject = z.string().min(1, 'must not be empty').max(1024, 'must be at most 1024 characters');

interface IdentityOptions {
  idp: string;
  subject: string;
  json?: boolean;
}

async function findUser(storage: Storage, username: string): Promise<UserRecord> {
  const user = await storage.users.findByUsername(username);
  if (user === undefined) throw new CliError(`no user ${username}`);
  return user;
}

/** `users link`, `users identities`, `users unlink`: the external identities of local users. */
export function registerUserIdentities(users: Command, ctx: CliContext): void {
  users
    .command('link')
    .description(
      'link an external identity (its subject at an identity provider) to a user, as `manual` mapping needs',
    )
    .argument('<username>')
    .requiredOption('--idp <name>', 'an identity provider kept in the database')
    .requiredOption(
      '--subject <subject>',
      "the identity's stable id at the provider (`sub`, user id, entryUUID)",
    )
    .option('--json', 'print the linked identity as JSON')
    .action(async (username: string, options: IdentityOptions, command: Command) => {
      const subject = parseField(Subject, options.subject, '--subject');
      await ctx.withServices(ctx.config(command), async ({ storage, clock }) => {
        const user = await findUser(storage, username);
        const provider = await storage.identityProviders.findByName(options.idp);
        if (provider === undefined) {
          throw new CliError(
            `no identity provider ${options.idp} in the database (identities of providers declared in the ` +
              'configuration file cannot be linked from the command line yet)',
          );
        }
        let identity: LinkedIdentityRecord;
        try {
          identity = await storage.identities.link({
            provider: provider.name,
            subject,
            userId: user.id,
            // Unknown until the first sign-in, which records the provider's username, email and groups.
            username: subject,
            email: null,
            groups: [],
            linkedAt: new Date(clock.now()),
            lastLoginAt: null,
          });
        } catch (error) {
          if (!(error instanceof StorageConflictError)) throw error;
          const existing = await storage.identities.find(provider.name, subject);
          const owner = existing && (await storage.users.findById(existing.userId));
          const to = owner === undefined ? '' : `, to user ${owner.username}`;
          throw new CliError(`${provider.name} subject ${subject} is linked already${to}`);
        }
        if (options.json) {
          ctx.json(linkedIdentityView(identity));
          return;
        }
        ctx.out(`linked ${provider.name} subject ${subject} to user ${user.username}`);
      });
    });

  users
    .command('identities')
    .description("list a user's linked external identities")
    .argument('<username>')
    .option('--json', 'print a JSON array')
    .action(async (username: string, options: { json?: boolean }, command: Command) => {
      await ctx.withServices(ctx.config(command), async ({ storage }) => {
        const user = await findUser(storage, username);
        const identities = await storage.identities.listByUser(user.id);
        if (options.json) {
          ctx.json(identities.map(linkedIdentityView));
          return;
        }
        if (identities.length === 0) {
          ctx.out(`no linked identities for ${user.username}`);
          return;
        }
        ctx.out(
          table(
            ['PROVIDER', 'SUBJECT', 'USERNAME', 'EMAIL', 'GROUPS', 'LINKED', 'LAST_LOGIN'],
            identities.map((i) => [
              i.provider,
              i.subject,
              i.username,
              i.email ?? '-',
              i.groups.join(',') || '-',
              when(i.linkedAt),
              when(i.lastLoginAt),
            ]),
          ),
        );
      });
    });

  users
    .command('unlink')
    .description('remove the link between a user and an external identity')
    .argument('<username>')
    .requiredOption('--idp <name>', 'the identity provider')
    .requiredOption('--subject <subject>', "the identity's id at the provider")
    .action(async (username: string, options: IdentityOptions, command: Command) => {
      const provider = options.idp.toLowerCase();
      await ctx.withServices(ctx.config(command), async ({ storage }) => {
        await storage.transaction(async (tx) => {
          const user = await findUser(tx, username);
          const identity = await tx.identities.find(provider, options.subject);
          if (identity?.userId !== user.id)
            throw new CliError(`user ${user.username} has no ${provider} identity ${options.subject}`);
          await tx.identities.unlink(provider, options.subject);
          ctx.out(`unlinked ${provider} subject ${options.subject} from user ${user.username}`);
        });
      });
    });
}
