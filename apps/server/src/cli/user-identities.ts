import {
  isAdminError,
  linkedIdentityView,
  linkIdentity,
  listUserIdentities,
  unlinkIdentity,
} from '@idgate/core/admin';
import { IdentitySubject } from '@idgate/schema';
import type { Command } from 'commander';
import { type CliContext, CliError, parseField, table, when } from './context.js';

interface IdentityOptions {
  idp: string;
  subject: string;
  json?: boolean;
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
      const subject = parseField(IdentitySubject, options.subject, '--subject');
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const { user, identity } = await linkIdentity(admin, {
          username,
          provider: options.idp,
          subject,
        }).catch((error: unknown) => {
          if (isAdminError(error) && error.code === 'not_found' && error.object === 'identity_provider')
            throw new CliError(
              `${error.message} (identities of providers declared in the configuration file cannot be ` +
                'linked from the command line yet)',
            );
          throw error;
        });
        if (options.json) {
          ctx.json(linkedIdentityView(identity));
          return;
        }
        ctx.out(`linked ${identity.provider} subject ${subject} to user ${user.username}`);
      });
    });

  users
    .command('identities')
    .description("list a user's linked external identities")
    .argument('<username>')
    .option('--json', 'print a JSON array')
    .action(async (username: string, options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const { user, identities } = await listUserIdentities(admin, username);
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
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const { user, identity } = await unlinkIdentity(admin, {
          username,
          provider: options.idp,
          subject: options.subject,
        });
        ctx.out(`unlinked ${identity.provider} subject ${identity.subject} from user ${user.username}`);
      });
    });
}
