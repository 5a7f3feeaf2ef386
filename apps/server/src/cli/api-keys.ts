import { apiKeyView, createApiKey, listApiKeys, parseAdminInput, revokeApiKey } from '@idgate/core';
import { ApiKeyScope, CreateApiKeyInput } from '@idgate/schema';
import type { Command } from 'commander';
import { type CliContext, optionLabels, table, when } from './context.js';

const API_KEY_OPTIONS = optionLabels({ name: '--name', scopes: '--scope' });

export function registerApiKeys(program: Command, ctx: CliContext): void {
  const apiKeys = program.command('api-keys').description('manage API keys (TokenReview webhook, admin API)');

  apiKeys
    .command('add')
    .description('create an API key; prints the key once')
    .requiredOption('--name <name>', 'what the key is for')
    .requiredOption('--scope <scope...>', `a scope: ${ApiKeyScope.options.join(' or ')} (repeatable)`)
    .option('--json', 'print the key as JSON')
    .action(async (options: { name: string; scope: string[]; json?: boolean }, command: Command) => {
      const input = parseAdminInput(
        CreateApiKeyInput,
        { name: options.name, scopes: options.scope },
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
            ['ID', 'PREFIX', 'NAME', 'SCOPES', 'CLUSTER', 'STATUS', 'CREATED', 'LAST_USED'],
            all.map((k) => [
              k.id,
              k.prefix,
              k.name,
              k.scopes.join(','),
              k.cluster?.name ?? '-',
              k.revokedAt === null ? 'active' : `revoked ${k.revokedAt.toISOString()}`,
              when(k.createdAt),
              when(k.lastUsedAt),
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
