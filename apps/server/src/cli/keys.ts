import { listSigningKeys, retireSigningKey, rotateSigningKeys } from '@idgate/core/admin';
import type { Command } from 'commander';
import { type CliContext, table } from './context.js';

export function registerKeys(program: Command, ctx: CliContext): void {
  const keys = program.command('keys').description('manage token signing keys');

  keys
    .command('list')
    .description('list signing keys and their state (never private material)')
    .option('--json', 'print a JSON array')
    .action(async (options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const all = await listSigningKeys(admin);
        if (options.json) {
          ctx.json(all);
          return;
        }
        ctx.out(
          table(
            ['KID', 'ALG', 'STATE', 'CREATED', 'RETIRED', 'PUBLISHED_UNTIL'],
            all.map((key) => [
              key.kid,
              key.alg,
              key.state,
              key.createdAt,
              key.retiredAt ?? '-',
              key.publishedUntil ?? '-',
            ]),
          ),
        );
      });
    });

  keys
    .command('rotate')
    .description('make a new key active; previous keys stay published until their tokens expire')
    .option('--json', 'print the new key and the retired kids as JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const { created, retired } = await rotateSigningKeys(admin);
        if (options.json) {
          ctx.json({ created, retired });
          return;
        }
        const delay = admin.keyPolicy.activationDelaySeconds ?? 0;
        ctx.out(`new ${created.state === 'next' ? 'next' : 'active'} key: ${created.kid} (${created.alg})`);
        ctx.out(retired.length === 0 ? 'retired: none' : `retired: ${retired.join(', ')}`);
        ctx.out(
          created.state === 'next'
            ? `running servers publish the new key at once and sign with it in ${delay} seconds`
            : 'running servers publish the new key and sign with it at once',
        );
      });
    });

  keys
    .command('retire')
    .description(
      'retire a key at once (incident response): it leaves JWKS and every token it signed stops verifying; --rotate makes a new key in the same step (needed for the only signing key)',
    )
    .argument('<kid>', 'the key id (see `idgate keys list`)')
    .option('--rotate', 'make a new signing key in the same step')
    .option('--json', 'print the retired key and the new one as JSON')
    .action(async (kid: string, options: { rotate?: boolean; json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const { retired, created } = await retireSigningKey(admin, kid, { rotate: options.rotate === true });
        if (options.json) {
          ctx.json({ retired, created });
          return;
        }
        ctx.out(`retired: ${retired.kid} (${retired.alg}), out of JWKS`);
        ctx.out(
          created === null ? 'new key: none' : `new key: ${created.kid} (${created.alg}), signing at once`,
        );
        ctx.out('running servers stop verifying its tokens within a second');
      });
    });
}
