import {
  addIdentityProvider,
  getIdentityProvider,
  listIdentityProviders,
  removeIdentityProvider,
  setIdentityProviderDisabled,
  updateIdentityProvider,
} from '@idgate/core/admin';
import type { IdentityProvider } from '@idgate/schema';
import type { Command } from 'commander';
import { type CliContext, table } from './context.js';
import {
  addProviderOptions,
  addProviderUpdateOptions,
  providerFromCommand,
  providerPatchFromCommand,
} from './idp-options.js';

export function registerIdps(program: Command, ctx: CliContext): void {
  const idps = program
    .command('idps')
    .description(
      'manage identity providers kept in the database (sign-in through OIDC, GitHub, GitLab, LDAP)',
    );

  addProviderOptions(
    idps
      .command('add')
      .description(
        'add an identity provider; secrets are read from stdin (--client-secret-stdin, --bind-password-stdin) ' +
          'or from --from-file, never from the command line, and are stored sealed',
      ),
  )
    .option('--json', 'print the provider as JSON (secrets shown as "[set]")')
    .action(async (options: { json?: boolean }, command: Command) => {
      const config = ctx.config(command);
      const { input, describe } = await providerFromCommand(command, ctx.io.stdin);
      await ctx.withAdmin(config, async (admin) => {
        const provider = await addIdentityProvider(admin, input, describe);
        if (options.json) {
          ctx.json(provider);
          return;
        }
        ctx.out(`added identity provider ${provider.name} (${provider.type})`);
        printConfig(ctx, provider);
        // Where the provider sends the browser back: `{issuer}/callback/{name}` (the issuer ends in `/oauth`).
        if (provider.type !== 'ldap') ctx.out(`callback URL: ${config.issuer}/callback/${provider.name}`);
      });
    });

  addProviderUpdateOptions(
    idps
      .command('update')
      .description(
        "change a stored identity provider's settings; options not given keep their value (the defaults " +
          'shown are those of idps add). The name and type stay, so linked identities keep working; a secret ' +
          'given (--client-secret-stdin, --bind-password-stdin) is rotated and stored sealed',
      )
      .argument('<name>'),
  )
    .option('--if-match <etag>', 'change it only if its etag (idps get --json) is still this one')
    .option('--json', 'print the provider as JSON (secrets shown as "[set]")')
    .action(async (name: string, options: { json?: boolean; ifMatch?: string }, command: Command) => {
      const config = ctx.config(command);
      await ctx.withAdmin(config, async (admin) => {
        const current = await getIdentityProvider(admin, name);
        const { input, describe } = await providerPatchFromCommand(command, ctx.io.stdin, current.type);
        const provider = await updateIdentityProvider(admin, name, input, {
          ...describe,
          ifMatch: options.ifMatch,
        });
        if (options.json) {
          ctx.json(provider);
          return;
        }
        ctx.out(`updated identity provider ${provider.name} (${provider.type})`);
        printConfig(ctx, provider);
      });
    });

  idps
    .command('list')
    .description('list the identity providers kept in the database (never their secrets)')
    .option('--json', 'print a JSON array')
    .action(async (options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const providers = await listIdentityProviders(admin, { source: 'database' });
        if (options.json) {
          ctx.json(providers);
          return;
        }
        if (providers.length === 0) {
          ctx.out('no identity providers in the database');
          return;
        }
        ctx.out(
          table(
            ['NAME', 'TYPE', 'STATUS', 'MAPPING', 'DISPLAY_NAME', 'CREATED'],
            providers.map(({ name, type, config, createdAt }) => [
              name,
              type,
              config.disabled === true ? 'disabled' : 'enabled',
              String(config.mapping),
              typeof config.displayName === 'string' ? config.displayName : '-',
              createdAt ?? '-',
            ]),
          ),
        );
      });
    });

  idps
    .command('get')
    .description('show one identity provider (never its secrets) and its etag')
    .argument('<name>')
    .option('--json', 'print the provider as JSON (secrets shown as "[set]")')
    .action(async (name: string, options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const provider = await getIdentityProvider(admin, name);
        if (options.json) {
          ctx.json(provider);
          return;
        }
        ctx.out(
          `identity provider ${provider.name} (${provider.type}, from the ${provider.source === 'config' ? 'configuration file' : 'database'})`,
        );
        printConfig(ctx, provider);
        ctx.out(`  etag: ${provider.etag}`);
      });
    });

  idps
    .command('remove')
    .description('delete an identity provider and unlink every identity linked through it')
    .argument('<name>')
    .action(async (name: string, _options: unknown, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const removed = await removeIdentityProvider(admin, name);
        const { unlinked } = removed;
        ctx.out(
          `identity provider ${removed.name} removed; ${unlinked} linked ${unlinked === 1 ? 'identity' : 'identities'} unlinked`,
        );
      });
    });

  for (const [verb, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    idps
      .command(verb)
      .description(
        disabled
          ? 'stop offering an identity provider for sign-in'
          : 'offer a disabled identity provider again',
      )
      .argument('<name>')
      .action(async (name: string, _options: unknown, command: Command) => {
        await ctx.withAdmin(ctx.config(command), async (admin) => {
          const { provider, changed } = await setIdentityProviderDisabled(admin, name, disabled);
          ctx.out(
            changed
              ? `identity provider ${provider.name} ${verb}d`
              : `identity provider ${provider.name} is already ${verb}d`,
          );
        });
      });
  }
}

/** The listing shape as `field: value` lines, nested fields dotted; secrets are `[set]` already. */
function printConfig(ctx: CliContext, view: IdentityProvider): void {
  const lines: Array<[string, string]> = [];
  const visit = (prefix: string, value: unknown) => {
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value))
        visit(prefix === '' ? key : `${prefix}.${key}`, inner);
    } else if (Array.isArray(value)) {
      lines.push([prefix, value.join(', ') || '-']);
    } else if (typeof value === 'string' && value.includes('\n')) {
      lines.push([prefix, '(PEM)']);
    } else {
      lines.push([prefix, String(value)]);
    }
  };
  visit('', view.config);
  const width = Math.max(...lines.map(([key]) => key.length)) + 1;
  for (const [key, value] of lines) ctx.out(`  ${`${key}:`.padEnd(width)} ${value}`);
}
