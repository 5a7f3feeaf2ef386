import { randomUUID } from 'node:crypto';
import { type ApiKeyRecord, generateApiKey, StorageConflictError } from '@idgate/core';
import { ApiKeyScope } from '@idgate/schema';
import type { Command } from 'commander';
import { type CliContext, CliError, distinct, parseField, table, when } from './context.js';
import { apiKeyView } from './views.js';

export function registerApiKeys(program: Command, ctx: CliContext): void {
  const apiKeys = program.command('api-keys').description('manage API keys (TokenReview webhook, admin API)');

  apiKeys
    .command('add')
    .description('create an API key; prints the key once')
    .requiredOption('--name <name>', 'what the key is for')
    .requiredOption('--scope <scope...>', `a scope: ${ApiKeyScope.options.join(' or ')} (repeatable)`)
    .option('--json', 'print the key as JSON')
    .action(async (options: { name: string; scope: string[]; json?: boolean }, command: Command) => {
      const name = options.name.trim();
      if (name === '') throw new CliError('--name: must not be empty');
      const scopes = distinct(options.scope.map((scope) => parseField(ApiKeyScope, scope, '--scope')));
      if (scopes.length === 0) throw new CliError('--scope: give at least one');
      await ctx.withServices(ctx.config(command), async ({ storage, clock }) => {
        const generated = await generateApiKey();
        let record: ApiKeyRecord;
        try {
          record = await storage.apiKeys.create({
            id: randomUUID(),
            name,
            prefix: generated.prefix,
            hash: generated.hash,
            scopes,
            createdAt: new Date(clock.now()),
            lastUsedAt: null,
            revokedAt: null,
          });
        } catch (error) {
          if (error instanceof StorageConflictError)
            throw new CliError('an API key with the generated prefix exists; try again');
          throw error;
        }
        if (options.json) {
          ctx.json({ ...apiKeyView(record), key: generated.key });
          return;
        }
        ctx.out(`created API key ${record.name} (id ${record.id}, scopes: ${record.scopes.join(', ')})`);
        ctx.out(`key: ${generated.key}  (shown only once)`);
      });
    });

  apiKeys
    .command('list')
    .description('list API keys (their prefixes, never the keys)')
    .option('--json', 'print a JSON array')
    .action(async (options: { json?: boolean }, command: Command) => {
      await ctx.withServices(ctx.config(command), async ({ storage }) => {
        const all = await storage.apiKeys.list();
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
            ['ID', 'PREFIX', 'NAME', 'SCOPES', 'STATUS', 'CREATED', 'LAST_USED'],
            all.map((k) => [
              k.id,
              k.prefix,
              k.name,
              k.scopes.join(','),
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
      await ctx.withServices(ctx.config(command), async ({ storage, clock }) => {
        if (!(await storage.apiKeys.revoke(idOrPrefix, new Date(clock.now())))) {
          throw new CliError(`no active API key ${idOrPrefix}`);
        }
        ctx.out(`API key ${idOrPrefix} revoked`);
      });
    });
}
