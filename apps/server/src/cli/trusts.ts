import { readFile } from 'node:fs/promises';
import { createTrustKeySource } from '@idgate/core';
import { addTrust, getTrust, listTrusts, removeTrust, testTrust, updateTrust } from '@idgate/core/admin';
import type { Trust, TrustEvaluation } from '@idgate/schema';
import type { Command } from 'commander';
import { type CliContext, CliError, optionLabels, readSecretFromStdin, table } from './context.js';
import { parseDuration } from './durations.js';

const TRUST_OPTIONS = optionLabels({
  name: 'NAME',
  issuer: '--issuer',
  audience: '--audience',
  jwks: '--jwks',
  discoveryUrl: '--discovery-url',
  condition: '--when',
  username: '--username',
  groups: '--groups',
  clusters: '--clusters',
  maxTtl: '--ttl',
});

interface TrustOptions {
  issuer?: string;
  audience?: string;
  jwks?: string;
  discoveryUrl?: string;
  when?: string;
  username?: string;
  groups?: string;
  clusters?: string;
  ttl?: string;
  json?: boolean;
}

const list = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');

async function readJwks(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(`--jwks: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError(`--jwks: ${file} is not JSON (a JWK set: {"keys": [...]})`);
  }
}

/** The fields the options give, as the admin input spells them. */
async function fieldsOf(options: TrustOptions): Promise<Record<string, unknown>> {
  const fields: Record<string, unknown> = {};
  if (options.issuer !== undefined) fields.issuer = options.issuer;
  if (options.audience !== undefined) fields.audience = options.audience;
  if (options.jwks !== undefined) fields.jwks = options.jwks === '' ? null : await readJwks(options.jwks);
  if (options.discoveryUrl !== undefined)
    fields.discoveryUrl = options.discoveryUrl === '' ? null : options.discoveryUrl;
  if (options.when !== undefined) fields.condition = options.when === '' ? null : options.when;
  if (options.username !== undefined) fields.username = options.username;
  if (options.groups !== undefined) fields.groups = list(options.groups);
  if (options.clusters !== undefined) fields.clusters = list(options.clusters);
  if (options.ttl !== undefined) fields.maxTtl = parseDuration(options.ttl, '--ttl');
  return fields;
}

function describe(ctx: CliContext, trust: Trust): void {
  ctx.out(`name: ${trust.name}`);
  ctx.out(`issuer: ${trust.issuer}`);
  ctx.out(`audience: ${trust.audience}`);
  ctx.out(
    `keys: ${trust.jwks !== null ? `inline (${trust.jwks.keys.length})` : `discovery ${trust.discoveryUrl ?? `${trust.issuer}/.well-known/openid-configuration`}`}`,
  );
  ctx.out(`when: ${trust.condition ?? '(always)'}`);
  ctx.out(`username: ${trust.username}`);
  ctx.out(`groups: ${trust.groups.length === 0 ? '-' : trust.groups.join(', ')}`);
  ctx.out(`clusters: ${trust.clusters.join(', ')}`);
  ctx.out(`ttl: ${trust.maxTtl}s`);
}

function explain(ctx: CliContext, result: TrustEvaluation): void {
  ctx.out(result.matched ? `trust ${result.trust} matches` : `trust ${result.trust} does not match`);
  if (!result.matched) ctx.out(`failed rule: ${result.rule}: ${result.reason}`);
  if (result.issuer !== null) ctx.out(`issuer: ${result.issuer}`);
  if (result.subject !== null) ctx.out(`subject: ${result.subject}`);
  for (const [claim, value] of Object.entries(result.run)) ctx.out(`${claim}: ${value}`);
  if (result.identity !== null) {
    ctx.out(`username: ${result.identity.username}`);
    ctx.out(`groups: ${result.identity.groups.length === 0 ? '-' : result.identity.groups.join(', ')}`);
  }
  if (result.clusters.length > 0) ctx.out(`clusters: ${result.clusters.join(', ')}`);
  if (result.maxTtl !== null) ctx.out(`longest lifetime now: ${result.maxTtl}s`);
}

export function registerTrusts(program: Command, ctx: CliContext): void {
  const trusts = program
    .command('trusts')
    .description(
      'manage trusts: external issuers (CI, service accounts) whose tokens the token exchange accepts',
    );

  const withFieldOptions = (command: Command) =>
    command
      .option('--issuer <url>', 'the issuer (iss) of the subject tokens')
      .option('--audience <aud>', 'the audience (aud) the subject tokens must carry')
      .option('--jwks <file>', 'a JWK set (JSON file) of public keys, for an issuer idgate cannot reach')
      .option(
        '--discovery-url <url>',
        'where discovery is read (default: <issuer>/.well-known/openid-configuration)',
      )
      .option('--when <cel>', 'a CEL condition over claims, e.g. claims.repository == "acme/infra"')
      .option('--username <template>', 'the username, {claim} placeholders, e.g. ci:{repository}')
      .option('--groups <list>', 'comma-separated groups of the identity')
      .option('--clusters <list>', 'comma-separated clusters the trust may reach')
      .option('--ttl <duration>', 'the longest lifetime of an exchanged token (e.g. 15m; at most 24h)')
      .option('--json', 'print the trust as JSON');

  withFieldOptions(
    trusts
      .command('add')
      .description('declare a trust')
      .argument('<name>', 'the trust name (letters, digits and -)'),
  ).action(async (name: string, options: TrustOptions, command: Command) => {
    const input = { name, ...(await fieldsOf(options)) };
    await ctx.withAdmin(ctx.config(command), async (admin) => {
      const trust = await addTrust(admin, input, { label: TRUST_OPTIONS });
      if (options.json) ctx.json(trust);
      else ctx.out(`declared trust ${trust.name}: ${trust.issuer} → ${trust.clusters.join(', ')}`);
    });
  });

  withFieldOptions(
    trusts
      .command('update')
      .description('change a trust (an empty --when, --jwks or --discovery-url clears it)')
      .argument('<name>'),
  ).action(async (name: string, options: TrustOptions, command: Command) => {
    const input = await fieldsOf(options);
    if (Object.keys(input).length === 0) throw new CliError('nothing to change: give at least one option');
    await ctx.withAdmin(ctx.config(command), async (admin) => {
      const trust = await updateTrust(admin, name, input, { label: TRUST_OPTIONS });
      if (options.json) ctx.json(trust);
      else ctx.out(`updated trust ${trust.name}`);
    });
  });

  trusts
    .command('list')
    .description('list trusts')
    .option('--json', 'print a JSON array')
    .action(async (options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const all = await listTrusts(admin);
        if (options.json) {
          ctx.json(all);
          return;
        }
        if (all.length === 0) {
          ctx.out('no trusts');
          return;
        }
        ctx.out(
          table(
            ['NAME', 'ISSUER', 'AUDIENCE', 'USERNAME', 'CLUSTERS', 'TTL'],
            all.map((t) => [t.name, t.issuer, t.audience, t.username, t.clusters.join(','), `${t.maxTtl}s`]),
          ),
        );
      });
    });

  trusts
    .command('describe')
    .description('show a trust')
    .argument('<name>')
    .option('--json', 'print the trust as JSON')
    .action(async (name: string, options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const trust = await getTrust(admin, name);
        if (options.json) ctx.json(trust);
        else describe(ctx, trust);
      });
    });

  trusts
    .command('remove')
    .description('remove a trust: the tokens exchanged under it stop being accepted at once')
    .argument('<name>')
    .action(async (name: string, _options: unknown, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        await removeTrust(admin, name);
        ctx.out(`removed trust ${name.toLowerCase()}`);
      });
    });

  trusts
    .command('test')
    .description(
      'evaluate a subject token (a JWT) against a trust, issuing nothing: which rule failed, or what identity and clusters would result',
    )
    .argument('<name>')
    .requiredOption('--token <file>', 'the subject token: a file, or - for stdin')
    .option('--cluster <name>', 'also check that the trust allows this cluster')
    .option('--json', 'print the evaluation as JSON')
    .action(
      async (
        name: string,
        options: { token: string; cluster?: string; json?: boolean },
        command: Command,
      ) => {
        let token: string;
        if (options.token === '-') token = await readSecretFromStdin(ctx.io.stdin, 'token');
        else {
          try {
            token = (await readFile(options.token, 'utf8')).trim();
          } catch (error) {
            throw new CliError(
              `--token: cannot read ${options.token}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
            );
          }
        }
        await ctx.withAdmin(ctx.config(command), async (admin) => {
          const keys = createTrustKeySource({ fetch: globalThis.fetch, clock: admin.clock });
          const input = { token, ...(options.cluster === undefined ? {} : { cluster: options.cluster }) };
          const result = await testTrust(admin, keys, name, input, {
            label: optionLabels({ token: '--token', cluster: '--cluster' }),
          });
          if (options.json) ctx.json(result);
          else explain(ctx, result);
          if (!result.matched) throw new CliError(`the token does not match trust ${result.trust}`);
        });
      },
    );
}
