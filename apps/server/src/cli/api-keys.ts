import { type ApiKeyRecord, generateApiKey } from '@idgate/core';
import {
  apiKeyView,
  createApiKey,
  getApiKey,
  isApiKeyLive,
  listApiKeys,
  parseAdminInput,
  revokeApiKey,
  updateApiKey,
} from '@idgate/core/admin';
import { API_KEY_ROLES, ApiKeyRole, ApiKeyScope, CreateApiKeyInput, UpdateApiKeyInput } from '@idgate/schema';
import type { Command } from 'commander';
import { type CliContext, CliError, collect, optionLabels, table, when } from './context.js';
import { parseDuration } from './durations.js';

const API_KEY_OPTIONS = { scopes: '--scope', roles: '--role', expiresIn: '--expires-in' };

const ROLES_HELP = ApiKeyRole.options.map((role) => `${role} (${API_KEY_ROLES[role].join(' ')})`).join('; ');

interface AddOptions {
  name?: string;
  scope?: string[];
  role?: string[];
  expiresIn?: string;
  json?: boolean;
}

interface UpdateOptions {
  name?: string;
  expiresIn?: string;
  expiresAt?: string;
  expiry?: boolean;
  json?: boolean;
}

export function registerApiKeys(program: Command, ctx: CliContext): void {
  const apiKeys = program
    .command('api-keys')
    .description('manage API keys (TokenReview webhook, admin API) and their scopes');

  apiKeys
    .command('add')
    .description('create an API key of scopes and roles; prints the key once')
    .argument('[name]', 'what the key is for')
    .option('--name <name>', 'what the key is for (instead of the NAME argument)')
    .option('--scope <scope>', `a scope (repeatable): ${ApiKeyScope.options.join(', ')}`, collect)
    .option('--role <role>', `a role, the scopes it gives (repeatable): ${ROLES_HELP}`, collect)
    .option(
      '--expires-in <duration>',
      'stop working after this long, e.g. 3600, 90m, 12h or 30d (default: never)',
    )
    .option('--json', 'print the key as JSON')
    .action(async (argument: string | undefined, options: AddOptions, command: Command) => {
      if (argument !== undefined && options.name !== undefined && argument !== options.name)
        throw new CliError('give the name once: as NAME or as --name');
      const name = argument ?? options.name;
      if (name === undefined) throw new CliError('give the key a name: idgate api-keys add NAME --scope S');
      const input = parseAdminInput(
        CreateApiKeyInput,
        {
          name,
          ...(options.scope === undefined ? {} : { scopes: options.scope }),
          ...(options.role === undefined ? {} : { roles: options.role }),
          ...(options.expiresIn === undefined
            ? {}
            : { expiresIn: parseDuration(options.expiresIn, '--expires-in') }),
        },
        'api_key',
        { label: optionLabels({ ...API_KEY_OPTIONS, name: argument === undefined ? '--name' : 'NAME' }) },
      );
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const { record, key } = await createApiKey(admin, input);
        if (options.json) {
          ctx.json({ ...apiKeyView(record), key });
          return;
        }
        ctx.out(`created API key ${record.name} (id ${record.id}, scopes: ${record.scopes.join(', ')})`);
        if (record.expiresAt) ctx.out(`expires: ${record.expiresAt.toISOString()}`);
        ctx.out(`key: ${key}  (shown only once)`);
      });
    });

  apiKeys
    .command('list')
    .description('list API keys (their prefixes, never the keys)')
    .option('--json', 'print a JSON array')
    .action(async (options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const all = await listApiKeys(admin);
        const now = new Date(admin.clock.now());
        if (options.json) {
          ctx.json(all.map(apiKeyView));
          return;
        }
        if (all.length === 0) {
          ctx.out('no API keys');
          return;
        }
        ctx.out(
          table(
            ['ID', 'PREFIX', 'NAME', 'SCOPES', 'CLUSTER', 'STATUS', 'CREATED', 'LAST_USED', 'EXPIRES'],
            all.map((k) => [
              k.id,
              k.prefix,
              k.name,
              k.scopes.join(','),
              k.cluster?.name ?? '-',
              status(k, now),
              when(k.createdAt),
              when(k.lastUsedAt),
              when(k.expiresAt ?? null),
            ]),
          ),
        );
      });
    });

  apiKeys
    .command('show')
    .description('show one API key by its id or prefix: its scopes, state and expiry (never the key)')
    .argument('<id-or-prefix>')
    .option('--json', 'print the key as JSON')
    .action(async (idOrPrefix: string, options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const key = await getApiKey(admin, idOrPrefix);
        if (options.json) ctx.json(apiKeyView(key));
        else for (const line of describeApiKey(key, new Date(admin.clock.now()))) ctx.out(line);
      });
    });

  apiKeys
    .command('update')
    .description('rename an API key or change when it stops working (its scopes never change)')
    .argument('<id-or-prefix>')
    .option('--name <name>', 'a new name')
    .option('--expires-in <duration>', 'stop working this long from now, e.g. 12h or 30d')
    .option('--expires-at <instant>', 'stop working then (ISO 8601 with an offset)')
    .option('--no-expiry', 'work until revoked')
    .option('--json', 'print the key as JSON')
    .action(async (idOrPrefix: string, options: UpdateOptions, command: Command) => {
      const expiries = [options.expiresIn, options.expiresAt, options.expiry === false ? true : undefined];
      if (expiries.filter((given) => given !== undefined).length > 1)
        throw new CliError('give one of --expires-in, --expires-at and --no-expiry');
      const input = parseAdminInput(
        UpdateApiKeyInput,
        {
          ...(options.name === undefined ? {} : { name: options.name }),
          ...(options.expiresIn === undefined
            ? {}
            : { expiresIn: parseDuration(options.expiresIn, '--expires-in') }),
          ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt }),
          ...(options.expiry === false ? { expiresAt: null } : {}),
        },
        'api_key',
        { label: optionLabels({ name: '--name', expiresIn: '--expires-in', expiresAt: '--expires-at' }) },
      );
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const key = await updateApiKey(admin, idOrPrefix, input);
        if (options.json) {
          ctx.json(apiKeyView(key));
          return;
        }
        ctx.out(`API key ${key.prefix} updated`);
        for (const line of describeApiKey(key, new Date(admin.clock.now()))) ctx.out(line);
      });
    });

  apiKeys
    .command('revoke')
    .description('revoke an API key by its id or prefix')
    .argument('<id-or-prefix>')
    .action(async (idOrPrefix: string, _options: unknown, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        await revokeApiKey(admin, idOrPrefix);
        ctx.out(`API key ${idOrPrefix} revoked`);
      });
    });

  apiKeys
    .command('generate')
    .description('print a new random API key without storing it, for a declarations file (`idgate apply`)')
    .action(async () => {
      ctx.out((await generateApiKey()).key);
    });
}

function status(key: ApiKeyRecord, now: Date): string {
  if (key.revokedAt !== null) return `revoked ${key.revokedAt.toISOString()}`;
  return isApiKeyLive(key, now) ? 'active' : 'expired';
}

/** A key as `api-keys show` prints it, a field a line. */
function describeApiKey(key: ApiKeyRecord, now: Date): string[] {
  return [
    `id:        ${key.id}`,
    `prefix:    ${key.prefix}`,
    `name:      ${key.name}`,
    `scopes:    ${key.scopes.join(' ')}`,
    `cluster:   ${key.cluster?.name ?? '-'}`,
    `status:    ${status(key, now)}`,
    `created:   ${when(key.createdAt)}`,
    `last used: ${when(key.lastUsedAt)}`,
    `expires:   ${when(key.expiresAt ?? null)}`,
  ];
}
