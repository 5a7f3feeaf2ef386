import { ADMIN_GROUP, initializeStorage } from '@idgate/core/admin';
import { InitResult, Username } from '@idgate/schema';
import type { Command } from 'commander';
import { type CliContext, parseField } from './context.js';

export function registerInit(program: Command, ctx: CliContext): void {
  program
    .command('init')
    .description('set up an empty database: an admin user, an API key and a trusted client for the CLI')
    .option('--admin-username <username>', 'username of the admin user', 'admin')
    .option('--json', 'print the created credentials as JSON')
    .action(async (options: { adminUsername: string; json?: boolean }, command: Command) => {
      const adminUsername = parseField(Username, options.adminUsername, '--admin-username');
      await ctx.withAdmin(
        ctx.config(command),
        async (admin, { config }) => {
          const created = await initializeStorage(admin, { adminUsername });
          const result = InitResult.parse({
            issuer: config.issuer,
            apiKey: created.apiKey.key,
            admin: { username: created.admin.user.username, password: created.admin.password },
            client: { clientId: created.client.client.clientId, clientSecret: created.client.clientSecret },
          });
          if (options.json) {
            ctx.json(result);
            return;
          }
          ctx.out('idgate is initialized. The secrets below are shown only once: store them now.');
          ctx.out();
          ctx.out(`Issuer:          ${result.issuer}`);
          ctx.out(`Admin user:      ${result.admin.username} (group ${ADMIN_GROUP})`);
          ctx.out(`Admin password:  ${result.admin.password}`);
          ctx.out(`API key:         ${result.apiKey} (scopes: tokenreview, admin)`);
          ctx.out(`CLI client id:   ${result.client.clientId} (trusted, confidential)`);
          ctx.out(`Client secret:   ${result.client.clientSecret}`);
        },
        { create: true },
      );
    });
}
