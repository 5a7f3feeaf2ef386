import type { ApiKeyRecord } from '@idgate/core';
import {
  apiKeyView,
  createApiKey,
  isApiKeyLive,
  listApiKeys,
  parseAdminInput,
  revokeApiKey,
} from '@idgate/core/admin';
import { ApiKeyScope, CreateApiKeyInput } from '@idgate/schema';
import type { Command } from 'commander';
import { type CliContext, optionLabels, table, when } from './context.js';
import { parseDuration } from './durations.js';

const API_KEY_OPTIONS = optionLabels({ name: '--name', scopes: '--scope', expiresIn: '--expires-in' });

export function registerApiKeys(program: Command, ctx: CliContext): void {
  const apiKeys = program.command('api-keys').description('manage API keys (TokenReview webhook, admin API)');

  apiKeys
    .command('add')
    .description('create an API key; prints the key once')
    .requiredOption('--name <name>', 'what the key is for')
    .requiredOption('--scope <scope...>', `a scope: ${ApiKeyScope.options.join(' or ')} (repeatable)`)
    .option(
      '--expires-in <duration>',
      'stop working after this long, e.g. 3600, 90m, 12h or 30d (default: never)',
    )
    .option('--json', 'print the key as JSON')
    .action(
      async (
        options: { name: string; scope: string[]; expiresIn?: string; json?: boolean },
        command: Command,
      ) => {
        const input = parseAdminInput(
          CreateApiKeyInput,
          {
            name: options.name,
            scopes: options.scope,
            ...(options.expiresIn === undefined
              ? {}
              : { expiresIn: parseDuration(options.expiresIn, '--expires-in') }),
          },
          'api_key',
          { label: API_KEY_OPTIONS },
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
      },
    );

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
    .command('revoke')
    .description('revoke an API key by its id or prefix')
    .argument('<id-or-prefix>')
    .action(async (idOrPrefix: string, _options: unknown, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        await revokeApiKey(admin, idOrPrefix);
        ctx.out(`API key ${idOrPrefix} revoked`);
      });
    });
}

function status(key: ApiKeyRecord, now: Date): string {
  if (key.revokedAt !== null) return `revoked ${key.revokedAt.toISOString()}`;
  return isApiKeyLive(key, now) ? 'active' : 'expired';
}
