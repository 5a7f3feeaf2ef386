import { listUserFactors, removeUserFactor, resetUserFactors } from '@idgate/core/admin';
import type { Command } from 'commander';
import { type CliContext, table, when } from './context.js';

/** `users factors`, `users remove-factor`, `users reset-factors`: a user's second factors. */
export function registerUserFactors(users: Command, ctx: CliContext): void {
  users
    .command('factors')
    .description(
      "list a user's second factors (never their secrets), recovery codes left, and whether one is required",
    )
    .argument('<username>')
    .option('--json', 'print the factors as JSON')
    .action(async (username: string, options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const listed = await listUserFactors(admin, username);
        if (options.json) {
          ctx.json(listed);
          return;
        }
        const required = listed.mfaRequired ? 'required' : 'not required';
        ctx.out(
          `${listed.username}: second factor ${required}, ${listed.recoveryCodesLeft} unused recovery codes`,
        );
        if (listed.factors.length === 0) {
          ctx.out('no second factors');
          return;
        }
        ctx.out(
          table(
            ['ID', 'KIND', 'NAME', 'ENROLLED', 'LAST_USED'],
            listed.factors.map((f) => [
              f.id,
              f.kind,
              f.name,
              when(new Date(f.createdAt)),
              when(f.lastUsedAt === null ? null : new Date(f.lastUsedAt)),
            ]),
          ),
        );
      });
    });

  users
    .command('remove-factor')
    .description("remove one of a user's second factors (its id from `users factors`)")
    .argument('<username>')
    .argument('<id>')
    .action(async (username: string, id: string, _options: unknown, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        await removeUserFactor(admin, username, id);
        ctx.out(`removed second factor ${id} of user ${username}`);
      });
    });

  users
    .command('reset-factors')
    .description(
      'remove every second factor and recovery code of a user who lost them all (check who they are first)',
    )
    .argument('<username>')
    .option('--json', 'print how many factors were removed as JSON')
    .action(async (username: string, options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const reset = await resetUserFactors(admin, username);
        if (options.json) {
          ctx.json(reset);
          return;
        }
        ctx.out(`removed ${reset.removed} second factors and every recovery code of user ${username}`);
      });
    });
}
