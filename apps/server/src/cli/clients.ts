import {
  clientView,
  DEFAULT_CLIENT_SCOPES,
  getClient,
  listClients,
  parseClientRegistration,
  registerClient,
  removeClient,
  rotateClientSecret,
  updateClient,
} from '@idgate/core/admin';
import type { OAuthClient } from '@idgate/schema';
import type { Command } from 'commander';
import { type CliContext, CliError, collect, optionLabels, table } from './context.js';
import { parseDuration } from './durations.js';
import { registerClientSessions } from './incident.js';

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
  requireMfa: '--require-mfa',
  accessTokenTtl: '--access-token-ttl',
  refreshTokenTtl: '--refresh-token-ttl',
  gracePeriod: '--grace-period',
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
  requireMfa?: boolean;
  accessTokenTtl?: string;
  refreshTokenTtl?: string;
  json?: boolean;
}

/** A lifetime option as a number of seconds (`3600`, `1h`). */
function parseTtl(raw: string | undefined, option = '--access-token-ttl'): number | undefined {
  return raw === undefined ? undefined : parseDuration(raw, option);
}

interface UpdateOptions {
  name?: string;
  redirectUri?: string[];
  addRedirectUri?: string[];
  removeRedirectUri?: string[];
  postLogoutRedirectUri?: string[];
  grant?: string[];
  scope?: string[];
  audience?: string[];
  accessTokenTtl?: string;
  refreshTokenTtl?: string;
  trusted?: boolean;
  requireMfa?: boolean;
  ifMatch?: string;
  json?: boolean;
}

/** A client as `clients show` prints it, one field a line. */
function describeClient(client: OAuthClient): string[] {
  const list = (values: readonly string[]) => values.join(' ') || '-';
  return [
    `client_id:                 ${client.clientId}`,
    `name:                      ${client.name}`,
    `type:                      ${client.public ? 'public' : 'confidential'}`,
    `trusted:                   ${client.trusted ? 'yes' : 'no'}`,
    `require MFA:               ${client.requireMfa ? 'yes' : 'no'}`,
    `grants:                    ${list(client.grantTypes)}`,
    `scopes:                    ${list(client.scopes)}`,
    `redirect URIs:             ${list(client.redirectUris)}`,
    `post-logout redirect URIs: ${list(client.postLogoutRedirectUris)}`,
    `audiences:                 ${list(client.audiences)}`,
    `access token TTL:          ${client.accessTokenTtl}s`,
    `refresh token TTL:         ${client.refreshTokenTtl}s`,
    `previous secret until:     ${client.previousSecretExpiresAt ?? '-'}`,
    `created:                   ${client.createdAt}`,
  ];
}

/** The change `clients update` asks for, as `UpdateClientInput` takes it (redirect URIs added and removed against `current`). */
function clientPatch(options: UpdateOptions, current: OAuthClient): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  if (options.name !== undefined) patch.name = options.name;
  if (
    options.redirectUri !== undefined &&
    (options.addRedirectUri ?? options.removeRedirectUri) !== undefined
  )
    throw new CliError(
      '--redirect-uri replaces the list: use it alone, or --add-redirect-uri / --remove-redirect-uri',
    );
  if (options.redirectUri !== undefined) patch.redirectUris = options.redirectUri;
  if (options.addRedirectUri !== undefined || options.removeRedirectUri !== undefined) {
    for (const uri of options.removeRedirectUri ?? [])
      if (!current.redirectUris.includes(uri))
        throw new CliError(`--remove-redirect-uri ${uri}: not a redirect URI of client ${current.clientId}`);
    const removed = new Set(options.removeRedirectUri);
    patch.redirectUris = [
      ...current.redirectUris.filter((uri) => !removed.has(uri)),
      ...(options.addRedirectUri ?? []),
    ];
  }
  if (options.postLogoutRedirectUri !== undefined)
    patch.postLogoutRedirectUris = options.postLogoutRedirectUri;
  if (options.grant !== undefined) patch.grantTypes = options.grant;
  if (options.scope !== undefined) patch.scopes = options.scope;
  if (options.audience !== undefined) patch.audiences = options.audience;
  if (options.accessTokenTtl !== undefined) patch.accessTokenTtl = parseTtl(options.accessTokenTtl);
  if (options.refreshTokenTtl !== undefined)
    patch.refreshTokenTtl = parseTtl(options.refreshTokenTtl, '--refresh-token-ttl');
  if (options.trusted !== undefined) patch.trusted = options.trusted;
  if (options.requireMfa !== undefined) patch.requireMfa = options.requireMfa;
  return patch;
}

export function registerClients(program: Command, ctx: CliContext): void {
  const clients = program.command('clients').description('manage OAuth clients');
  registerClientSessions(clients, ctx);

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
      `an allowed scope (repeatable; default: ${DEFAULT_CLIENT_SCOPES.join(' ')}, and offline_access with the refresh_token grant)`,
    )
    .option('--audience <audience...>', 'an audience its access tokens may carry (repeatable)')
    .option('--public', 'a public client (no secret: native and browser apps)')
    .option('--trusted', 'may use the password grant and skips consent')
    .option('--require-mfa', 'every sign-in for it needs a second factor (acr urn:idgate:acr:mfa)')
    .option(
      '--access-token-ttl <duration>',
      'access token lifetime, e.g. 600 or 10m (default: tokens.accessTokenTtl)',
    )
    .option(
      '--refresh-token-ttl <duration>',
      'refresh token lifetime, e.g. 30d (default: tokens.refreshTokenTtl)',
    )
    .option('--json', 'print the client as JSON (clientId, and clientSecret for a confidential client)')
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
          ...(options.requireMfa === true ? { requireMfa: true } : {}),
          accessTokenTtl: parseTtl(options.accessTokenTtl),
          refreshTokenTtl: parseTtl(options.refreshTokenTtl, '--refresh-token-ttl'),
        },
        config.tokens,
        { label: CLIENT_OPTIONS },
      );
      await ctx.withAdmin(config, async (admin) => {
        const { client, clientSecret } = await registerClient(admin, settings);
        if (options.json) {
          const view = clientView(client);
          ctx.json(clientSecret === undefined ? view : { ...view, clientSecret });
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
    .command('show')
    .description('show one client (never its secret)')
    .argument('<client_id>')
    .option('--json', 'print the client as JSON')
    .action(async (clientId: string, options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const client = await getClient(admin, clientId);
        if (options.json) ctx.json(client);
        else for (const line of describeClient(client)) ctx.out(line);
      });
    });

  clients
    .command('update')
    .description('change a client; the result is checked like a registration')
    .argument('<client_id>')
    .option('--name <name>', 'a name people recognize')
    .option('--redirect-uri <uri>', 'replace the redirect URIs with these (repeatable)', collect)
    .option('--add-redirect-uri <uri>', 'add a redirect URI (repeatable)', collect)
    .option('--remove-redirect-uri <uri>', 'remove a redirect URI (repeatable)', collect)
    .option('--post-logout-redirect-uri <uri>', 'replace the post-logout redirect URIs (repeatable)', collect)
    .option('--grant <grant>', 'replace the grant types with these (repeatable)', collect)
    .option('--scope <scope>', 'replace the scopes with these (repeatable)', collect)
    .option('--audience <audience>', 'replace the audiences with these (repeatable)', collect)
    .option('--access-token-ttl <duration>', 'access token lifetime, e.g. 600 or 10m')
    .option('--refresh-token-ttl <duration>', 'refresh token lifetime, e.g. 30d')
    .option('--trusted', 'may use the password grant and skips consent')
    .option('--no-trusted', 'no longer trusted')
    .option('--require-mfa', 'every sign-in for it needs a second factor (acr urn:idgate:acr:mfa)')
    .option('--no-require-mfa', 'sign-ins for it no longer need a second factor')
    .option('--if-match <etag>', 'change it only if its ETag (clients show --json) is still this')
    .option('--json', 'print the changed client as JSON')
    .action(async (clientId: string, options: UpdateOptions, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const current = await getClient(admin, clientId);
        const client = await updateClient(admin, clientId, clientPatch(options, current), {
          label: CLIENT_OPTIONS,
          // Without --if-match, the version just read: a concurrent change is not overwritten.
          ifMatch: options.ifMatch ?? current.etag,
        });
        if (options.json) ctx.json(client);
        else {
          ctx.out(`client ${client.clientId} updated`);
          for (const line of describeClient(client)) ctx.out(line);
        }
      });
    });

  clients
    .command('rotate-secret')
    .description('give a confidential client a new secret; prints it once')
    .argument('<client_id>')
    .option(
      '--grace-period <duration>',
      'how long the current secret keeps working, e.g. 1h or 7d (default 0: it stops at once; at most 30d)',
    )
    .option('--json', 'print clientId, clientSecret and previousSecretExpiresAt as JSON')
    .action(async (clientId: string, options: { gracePeriod?: string; json?: boolean }, command: Command) => {
      const gracePeriod =
        options.gracePeriod === undefined
          ? 0
          : parseDuration(options.gracePeriod, '--grace-period', { allowZero: true });
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const rotated = await rotateClientSecret(admin, clientId, { gracePeriod }, { label: CLIENT_OPTIONS });
        if (options.json) {
          ctx.json(rotated);
          return;
        }
        ctx.out(`client_secret: ${rotated.clientSecret}  (shown only once)`);
        ctx.out(
          rotated.previousSecretExpiresAt === null
            ? 'the previous secret no longer works'
            : `the previous secret works until ${rotated.previousSecretExpiresAt}`,
        );
      });
    });

  clients
    .command('delete')
    .alias('remove')
    .description('delete a client and revoke its grants')
    .argument('<client_id>')
    .action(async (clientId: string, _options: unknown, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const { revokedGrants } = await removeClient(admin, clientId);
        ctx.out(
          `client ${clientId} removed (${revokedGrants} grant${revokedGrants === 1 ? '' : 's'} revoked)`,
        );
      });
    });
}
