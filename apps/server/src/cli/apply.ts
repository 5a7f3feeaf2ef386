import { applyDeclarations } from '@idgate/core/admin';
import { type ApplyResult, DeclarationManager, type PlannedChange } from '@idgate/schema';
import type { Command } from 'commander';
import { appliedSummary, nodeSecretReader, readDeclarationFiles } from '../declarations.js';
import { type CliContext, CliError, collect } from './context.js';

interface ApplyFlags {
  filename?: string[];
  dryRun?: boolean;
  prune?: boolean;
  manager: string;
  exitCode?: boolean;
  json?: boolean;
}

const MARKS: Record<PlannedChange['action'], string> = {
  create: '+',
  update: '~',
  delete: '-',
  unchanged: '=',
};

const shown = (value: unknown) => JSON.stringify(value ?? null);

/** A plan as a diff: one line per object that changes (or drifted), its fields indented below. */
export function planLines(result: ApplyResult): string[] {
  const lines: string[] = [];
  for (const change of result.changes) {
    if (change.action === 'unchanged' && !change.drift) continue;
    const notes = [
      change.adopted ? 'adopted: it existed, unmanaged' : undefined,
      change.drift
        ? change.action === 'delete'
          ? 'drift: changed by hand'
          : 'drift: changed by hand since last applied'
        : undefined,
    ].filter((note) => note !== undefined);
    lines.push(
      `${MARKS[change.action]} ${change.kind} ${change.name}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`,
    );
    for (const field of change.fields) {
      if (change.action === 'create') lines.push(`    ${field.field}: ${shown(field.after)}`);
      else if (change.action === 'delete') lines.push(`    ${field.field}: ${shown(field.before)}`);
      else lines.push(`    ${field.field}: ${shown(field.before)} → ${shown(field.after)}`);
    }
  }
  const { create, update, delete: deleted, unchanged, drift } = result.summary;
  lines.push(
    result.dryRun
      ? `Plan: ${create} to create, ${update} to update, ${deleted} to delete, ${unchanged} unchanged${drift > 0 ? ` (${drift} drifted)` : ''}.`
      : `Applied: ${appliedSummary(result)}.`,
  );
  return lines;
}

/**
 * `idgate apply -f FILE|DIR`: makes the database hold the objects declared in files (clients,
 * clusters, trusts, groups, identity providers, users and API keys), secrets by reference; `--dry-run` prints the
 * plan, `--prune` deletes what the manager declared before and no longer does.
 */
export function registerApply(program: Command, ctx: CliContext): void {
  program
    .command('apply')
    .description('make the database hold the objects declared in files (see docs/operating/declarations.md)')
    .option(
      '-f, --filename <path>',
      'a declarations file (YAML or JSON) or a directory of them (repeatable)',
      collect,
    )
    .option('--dry-run', 'print the plan as a diff and change nothing')
    .option('--prune', 'delete objects this manager declared before and the files no longer declare')
    .option('--manager <name>', "who owns the declared objects; another manager's are refused", 'apply')
    .option(
      '--exit-code',
      'exit with code 2 when the plan changes anything (with --dry-run: drift checks in CI)',
    )
    .option('--json', 'print the plan as JSON')
    .action(async (options: ApplyFlags, command: Command) => {
      if (options.filename === undefined || options.filename.length === 0)
        throw new CliError('give the declarations: idgate apply -f FILE|DIR');
      const manager = DeclarationManager.safeParse(options.manager);
      if (!manager.success)
        throw new CliError(`--manager "${options.manager}": ${manager.error.issues[0]?.message}`);
      const { declarations } = await readDeclarationFiles(options.filename);
      const readSecret = nodeSecretReader({ env: ctx.io.env, files: true });
      const result = await ctx.withAdmin(ctx.config(command), (admin) =>
        applyDeclarations({ ...admin, readSecret }, declarations, {
          manager: manager.data,
          dryRun: options.dryRun === true,
          prune: options.prune === true,
        }),
      );
      if (options.json) ctx.json(result);
      else for (const line of planLines(result)) ctx.out(line);
      const { create, update, delete: deleted } = result.summary;
      if (options.exitCode && create + update + deleted > 0)
        throw new CliError(`the plan changes ${create + update + deleted} object(s)`, 2);
    });
}
