import {
  clientView,
  DEFAULT_CLIENT_SCOPES,
  listClients,
  parseClientRegistration,
  registerClient,
  removeClient,
} from '@idgate/core';
import type { Command } from 'commander';
import { type CliContext, CliError, optionLabels, table } from './context.js';

/** The options that set each field of a registration, for errors that name what the user typed. */
const CLIENT_OPTIONS = optionLabels({
  name: '--name',
  grantTypes: '--grant',
  redirectUris: '--redirect-uri',
  postLogoutRedirectUris: '--post-logout-redirect-uri',
  scopes: '--scope',
  audiences: '--audience',
  public: '--public',
  trusted: '--trusted',
  accessTokenTtl: '--access-token-ttl',
});

interface AddOptions {
  name: string;
  redirectUri?: string[];
  postLogoutRedirectUri?: string[];
  grant?: string[];
  scope?: string[];
  audience?: string[];
  public?: boolean;
  trusted?: boolean;
  accessTokenTtl?: string;
  json?: boolean;
}

/** `--access-token-ttl` as a number of seconds. */
function parseTtl(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ttl = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(ttl) || ttl <= 0)
    throw new CliError(
      `--access-token-ttl ${JSON.stringify(raw)}: must be a positive whole number of seconds`,
    );
  return ttl;
}

export function registerClients(program: Command, ctx: CliContext): void {
  const clients = program.command('clients').description('manage OAuth clients');

  clients
    .command('add')
    .description('register a client; prints its client_id and, for a confidential client, its secret')
    .requiredOption('--name <name>', 'a name people recognize')
    .option('--redirect-uri <uri...>', 'an allowed redirect URI (repeatable)')
    .option(
      '--post-logout-redirect-uri <uri...>',
      'where RP-Initiated Logout may send the browser afterwards (repeatable)',
    )
    .option(
      '--grant <grant...>',
      'an allowed grant type (repeatable; default: client_credentials, or authorization_code refresh_token with --public)',
    )
    .option(
      '--scope <scope...>',
      `an allowed scope (repeatable; default: ${DEFAULT_CLIENT_SCOPES.join(' ')})`,
    )
    .option('--audience <audience...>', 'an audience its access tokens may carry (repeatable)')
    .option('--public', 'a public client (no secret: native and browser apps)')
    .option('--trusted', 'may use the password grant and skips consent')
    .option('--access-token-ttl <seconds>', 'access token lifetime (default: tokens.accessTokenTtl)')
    .option('--json', 'print the client as JSON')
    .action(async (options: AddOptions, command: Command) => {
      const config = ctx.config(command);
      // Checked before the database is opened.
      const settings = parseClientRegistration(
        {
          name: options.name,
          grantTypes: options.grant,
          redirectUris: options.redirectUri,
          postLogoutRedirectUris: options.postLogoutRedirectUri,
          scopes: options.scope,
          audiences: options.audience,
          public: options.public === true,
          trusted: options.trusted === true,
          accessTokenTtl: parseTtl(options.accessTokenTtl),
        },
        config.tokens,
        { label: CLIENT_OPTIONS },
      );
      await ctx.withAdmin(config, async (admin) => {
        const { client, clientSecret } = await registerClient(admin, settings);
        if (options.json) {
          const view = { ...clientView(client), client_id: client.clientId };
          ctx.json(clientSecret === undefined ? view : { ...view, client_secret: clientSecret });
          return;
        }
        ctx.out(`created ${client.public ? 'public' : 'confidential'} client ${client.name}`);
        ctx.out(`client_id:     ${client.clientId}`);
        if (clientSecret !== undefined) ctx.out(`client_secret: ${clientSecret}  (shown only once)`);
      });
    });

  clients
    .command('list')
    .description('list clients (never their secrets)')
    .option('--json', 'print a JSON array')
    .action(async (options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const all = await listClients(admin);
        if (options.json) {
          ctx.json(all.map(clientView));
          return;
        }
        if (all.length === 0) {
          ctx.out('no clients');
          return;
        }
        ctx.out(
          table(
            ['CLIENT_ID', 'NAME', 'TYPE', 'TRUSTED', 'GRANTS', 'REDIRECT_URIS'],
            all.map((c) => [
              c.clientId,
              c.name,
              c.public ? 'public' : 'confidential',
              c.trusted ? 'yes' : 'no',
              c.grantTypes.join(','),
              c.redirectUris.join(' ') || '-',
            ]),
          ),
        );
      });
    });

  clients
    .command('remove')
    .description('delete a client')
    .argument('<client_id>')
    .action(async (clientId: string, _options: unknown, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        await removeClient(admin, clientId);
        ctx.out(`client ${clientId} removed`);
      });
    });
}
