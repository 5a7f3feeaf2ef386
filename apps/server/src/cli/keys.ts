import { rotateSigningKey } from '@idgate/core';
import type { Command } from 'commander';
import { withSigningKeyLock } from '../storage/locks.js';
import { type CliContext, table, when } from './context.js';
import { signingKeyView } from './views.js';

export function registerKeys(program: Command, ctx: CliContext): void {
  const keys = program.command('keys').description('manage token signing keys');

  keys
    .command('list')
    .description('list signing keys and their state (never private material)')
    .option('--json', 'print a JSON array')
    .action(async (options: { json?: boolean }, command: Command) => {
      await ctx.withServices(ctx.config(command), async ({ storage, clock }) => {
        const now = new Date(clock.now());
        const all = await storage.signingKeys.list();
        if (options.json) {
          ctx.json(all.map((key) => signingKeyView(key, now)));
          return;
        }
        ctx.out(
          table(
            ['KID', 'ALG', 'STATE', 'CREATED', 'RETIRED', 'PUBLISHED_UNTIL'],
            all.map((key) => {
              const view = signingKeyView(key, now);
              return [
                view.kid,
                view.alg,
                view.state,
                when(key.createdAt),
                when(key.retiredAt),
                when(key.publishedUntil),
              ];
            }),
          ),
        );
      });
    });

  keys
    .command('rotate')
    .description('make a new key active; previous keys stay published until their tokens expire')
    .option('--json', 'print the new key and the retired kids as JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      await ctx.withServices(ctx.config(command), async ({ storage, keyPolicy, clock, database }) => {
        const now = new Date(clock.now());
        // One transaction under the key lock: a failure halfway cannot leave the new key stored
        // beside an unretired old one, and two rotations at once run one after the other.
        const { created, retired } = await withSigningKeyLock(storage, database, (tx) =>
          rotateSigningKey(tx.signingKeys, keyPolicy, now),
        );
        if (options.json) {
          ctx.json({ created: signingKeyView(created, now), retired });
          return;
        }
        ctx.out(`new active key: ${created.kid} (${created.alg})`);
        ctx.out(retired.length === 0 ? 'retired: none' : `retired: ${retired.join(', ')}`);
        ctx.out(
          `running servers publish the new key at once and sign with it in ${keyPolicy.activationDelaySeconds ?? 0} seconds`,
        );
      });
    });
}
