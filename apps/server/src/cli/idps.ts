import { type IdentityProviderRecord, type Storage, StorageConflictError } from '@idgate/core';
import type { IdentityProvider, IdentityProviderConfig } from '@idgate/schema';
import type { Command } from 'commander';
import type { IdgateConfig } from '../config.js';
import { describeProvider, fromStoredConfig, toStoredConfig } from '../federation/provider-store.js';
import type { Services } from '../services.js';
import { type CliContext, CliError, table, when } from './context.js';
import { addProviderOptions, providerFromCommand } from './idp-options.js';

export function registerIdps(program: Command, ctx: CliContext): void {
  const idps = program
    .command('idps')
    .description(
      'manage identity providers kept in the database (sign-in through OIDC, GitHub, GitLab, LDAP)',
    );

  /** Refuses a provider the configuration file declares: the file's one wins and is changed there. */
  const notFromFile = (config: IdgateConfig, name: string) => {
    if (config.identityProviders.some((provider) => provider.name === name.toLowerCase()))
      throw new CliError(`identity provider ${name} is declared in the configuration file: change it there`);
  };
  const findStored = async (storage: Storage, config: IdgateConfig, name: string) => {
    const record = await storage.identityProviders.findByName(name);
    if (record !== undefined) return record;
    notFromFile(config, name);
    throw new CliError(`no identity provider ${name} in the database`);
  };

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
      const provider = await providerFromCommand(command, ctx.io.stdin);
      notFromFile(config, provider.name);
      await ctx.withServices(config, async ({ storage, clock, keyPolicy }) => {
        const now = new Date(clock.now());
        let record: IdentityProviderRecord;
        try {
          record = await storage.identityProviders.create({
            name: provider.name,
            type: provider.type,
            config: await toStoredConfig(provider, keyPolicy.secret),
            disabled: provider.disabled,
            createdAt: now,
            updatedAt: now,
          });
        } catch (error) {
          if (error instanceof StorageConflictError)
            throw new CliError(`identity provider ${provider.name} already exists`);
          throw error;
        }
        const view = describeProvider(provider, 'database', record.createdAt);
        if (options.json) {
          ctx.json(view);
          return;
        }
        ctx.out(`added identity provider ${provider.name} (${provider.type})`);
        printConfig(ctx, view);
        if (provider.type !== 'ldap') ctx.out(`callback URL: ${callbackUrl(config, provider)}`);
      });
    });

  idps
    .command('list')
    .description('list the identity providers kept in the database (never their secrets)')
    .option('--json', 'print a JSON array')
    .action(async (options: { json?: boolean }, command: Command) => {
      await ctx.withServices(ctx.config(command), async ({ storage, keyPolicy }) => {
        const records = await storage.identityProviders.list();
        const configs = await Promise.all(
          records.map((record) => fromStoredConfig(record, keyPolicy.secret)),
        );
        if (options.json) {
          ctx.json(
            configs.map((config, i) => describeProvider(config, 'database', records[i]?.createdAt ?? null)),
          );
          return;
        }
        if (configs.length === 0) {
          ctx.out('no identity providers in the database');
          return;
        }
        ctx.out(
          table(
            ['NAME', 'TYPE', 'STATUS', 'MAPPING', 'DISPLAY_NAME', 'CREATED'],
            configs.map((config, i) => [
              config.name,
              config.type,
              config.disabled ? 'disabled' : 'enabled',
              config.mapping,
              config.displayName ?? '-',
              when(records[i]?.createdAt ?? null),
            ]),
          ),
        );
      });
    });

  idps
    .command('remove')
    .description('delete an identity provider and unlink every identity linked through it')
    .argument('<name>')
    .action(async (name: string, _options: unknown, command: Command) => {
      const config = ctx.config(command);
      await ctx.withServices(config, async (services) => {
        const record = await findStored(services.storage, config, name);
        // Counted first, for the message: `remove` deletes the identities with the provider, at once.
        const linked = await countLinked(services, record.name);
        if (!(await services.storage.identityProviders.remove(record.name)))
          throw new CliError(`no identity provider ${name} in the database`);
        ctx.out(
          `identity provider ${record.name} removed; ${linked} linked ${linked === 1 ? 'identity' : 'identities'} unlinked`,
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
        const config = ctx.config(command);
        await ctx.withServices(config, async ({ storage, clock }) => {
          const record = await findStored(storage, config, name);
          if (record.disabled === disabled) {
            ctx.out(`identity provider ${record.name} is already ${verb}d`);
            return;
          }
          await storage.identityProviders.setDisabled(record.name, disabled, new Date(clock.now()));
          ctx.out(`identity provider ${record.name} ${verb}d`);
        });
      });
  }
}

/** Where the provider sends the browser back: `{issuer}/callback/{name}` (the issuer ends in `/oauth`). */
function callbackUrl(config: IdgateConfig, provider: IdentityProviderConfig): string {
  return `${config.issuer}/callback/${provider.name}`;
}

async function countLinked(services: Services, provider: string): Promise<number> {
  const row = await services.database.db
    .selectFrom('linked_identities')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('provider', '=', provider)
    .executeTakeFirstOrThrow();
  return Number(row.n);
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
