import { readFile } from 'node:fs/promises';
import { verifyAuditTrail } from '@idgate/core/admin';
import type { AuditChainVerification } from '@idgate/schema';
import type { Command } from 'commander';
import { type CliContext, CliError } from './context.js';

interface VerifyOptions {
  json?: boolean;
  printHead?: boolean;
  heads?: string;
}

/** The heads of a file as `--print-head` or `--json` wrote it: a JSON document with a `heads` list. */
async function recordedHeads(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(
      `--heads ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new CliError(`--heads ${file}: is not JSON (expected what --print-head or --json printed)`);
  }
  if (typeof document !== 'object' || document === null || !('heads' in document))
    throw new CliError(`--heads ${file}: has no "heads" list (expected what --print-head or --json printed)`);
  return { heads: document.heads };
}

// One line per broken chain only: every process that ever wrote events is a writer, so a
// long-lived trail has many (--json lists them all).
function print(ctx: CliContext, result: AuditChainVerification): void {
  for (const writer of result.writers) {
    if (writer.broken !== null)
      ctx.out(`writer ${writer.writer}  ${writer.events} events  BROKEN (${writer.broken.kind})`);
  }
  if (result.unchained > 0)
    ctx.out(
      `${result.unchained} unchained events (stored before the chain began, or by an idgate too old to chain)`,
    );
  for (const broken of result.broken)
    ctx.out(`broken: writer ${broken.writer}: ${broken.kind}: ${broken.message}`);
  ctx.out(
    result.intact
      ? `intact: ${result.events} events in ${result.writers.length} chains`
      : `NOT INTACT: ${result.broken.length} broken ${result.broken.length === 1 ? 'link' : 'links'}`,
  );
}

/** `idgate audit verify`: the tamper-evident chains of the audit trail, checked; exit 1 when broken. */
export function registerAuditVerify(audit: Command, ctx: CliContext): void {
  audit
    .command('verify')
    .description(
      'verify the tamper-evident chains of the audit trail and name each first broken link (exit code 1 when broken)',
    )
    .option('--json', 'print the whole verification as one JSON document')
    .option(
      '--print-head',
      'print only the heads of the chains, as JSON, to record outside idgate (and pass to --heads)',
    )
    .option('--heads <file>', 'also check heads recorded earlier (what --print-head or --json printed)')
    .action(async (options: VerifyOptions, command: Command) => {
      // `audit` has a --json of its own, which commander hands the parent: either one counts.
      const json = options.json === true || command.parent?.opts().json === true;
      const listing = ['user', 'since', 'until', 'limit', 'follow'].filter(
        (name) => command.parent?.opts()[name] !== undefined,
      );
      const types = command.parent?.opts().type as string[] | undefined;
      if (listing.length > 0 || (types?.length ?? 0) > 0)
        throw new CliError(
          `audit verify checks the whole trail: --${[...listing, ...(types?.length ? ['type'] : [])][0]} does not apply`,
        );
      const input = options.heads === undefined ? {} : await recordedHeads(options.heads);
      const config = ctx.config(command);
      const result = await ctx.withAdmin(config, (admin) => verifyAuditTrail(admin, input));
      if (options.printHead === true) ctx.json({ heads: result.heads });
      else if (json) ctx.json(result);
      else print(ctx, result);
      if (!result.intact) {
        const first = result.broken[0];
        throw new CliError(
          `the audit trail is not intact: ${first === undefined ? '' : `writer ${first.writer}: ${first.message}`}${result.broken.length > 1 ? ` (and ${result.broken.length - 1} more)` : ''}`,
        );
      }
    });
}
