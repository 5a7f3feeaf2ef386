import { type ClientRecord, generateSecret, hashSecret, StorageConflictError } from '@idgate/core';
import { GrantType } from '@idgate/schema';
import type { Command } from 'commander';
import { type CliContext, CliError, distinct, parseField, table } from './context.js';
import { generateClientId } from './generate.js';
import { clientView } from './views.js';

const DEFAULT_SCOPES = ['openid', 'profile', 'email', 'groups'];
// RFC 8252 §7.3: plain http is acceptable only for a redirect to the loopback interface.
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

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

/**
 * A redirect URI checked as RFC 6749 §3.1.2 and RFC 8252 require; returned exactly as given.
 * Post-logout redirect URIs get the same checks: they too send the browser, with `state`, to the client.
 */
export function checkRedirectUri(raw: string, option = '--redirect-uri'): string {
  const bad = (why: string) => new CliError(`${option} ${JSON.stringify(raw)}: ${why}`);
  if (/\s/.test(raw)) throw bad('must not contain whitespace');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad('must be an absolute URL');
  }
  if (raw.includes('#')) throw bad('must not have a fragment (RFC 6749 §3.1.2)');
  if (url.protocol === 'https:') return raw;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return raw;
  throw bad('must use https (http is allowed only for localhost, 127.0.0.1 or [::1], RFC 8252 §7.3)');
}

/** The validated client settings, without its id and secret. */
export function clientSettings(
  options: AddOptions,
  limits: { maxAccessTokenTtl: number; accessTokenTtl: number },
): Pick<
  ClientRecord,
  | 'name'
  | 'public'
  | 'trusted'
  | 'redirectUris'
  | 'postLogoutRedirectUris'
  | 'grantTypes'
  | 'scopes'
  | 'audiences'
  | 'accessTokenTtl'
> {
  const name = options.name.trim();
  if (name === '') throw new CliError('--name: must not be empty');
  const isPublic = options.public === true;
  const trusted = options.trusted === true;
  const grantTypes = distinct(
    (options.grant ?? (isPublic ? ['authorization_code', 'refresh_token'] : ['client_credentials'])).map(
      (grant) => parseField(GrantType, grant, '--grant'),
    ),
  );
  const redirectUris = distinct((options.redirectUri ?? []).map((uri) => checkRedirectUri(uri)));
  const postLogoutRedirectUris = distinct(
    (options.postLogoutRedirectUri ?? []).map((uri) => checkRedirectUri(uri, '--post-logout-redirect-uri')),
  );
  const scopes = distinct(options.scope ?? DEFAULT_SCOPES);
  for (const scope of scopes) {
    if (!SCOPE_TOKEN.test(scope))
      throw new CliError(`--scope ${JSON.stringify(scope)}: not a valid scope (RFC 6749 §3.3)`);
  }
  const audiences = distinct(options.audience ?? []);
  for (const audience of audiences) {
    if (!/^\S+$/.test(audience))
      throw new CliError(`--audience ${JSON.stringify(audience)}: must be non-empty, without whitespace`);
  }
  if (grantTypes.includes('authorization_code') && redirectUris.length === 0) {
    throw new CliError('--grant authorization_code needs at least one --redirect-uri');
  }
  if (isPublic) {
    for (const grant of ['client_credentials', 'password'] as const) {
      if (grantTypes.includes(grant))
        throw new CliError(`--grant ${grant}: not allowed for a --public client, which has no secret`);
    }
  }
  if (grantTypes.includes('password') && !trusted) {
    throw new CliError('--grant password: allowed only for a --trusted client');
  }
  let accessTokenTtl = limits.accessTokenTtl;
  if (options.accessTokenTtl !== undefined) {
    const raw = options.accessTokenTtl;
    const ttl = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(ttl) || ttl <= 0) {
      throw new CliError(
        `--access-token-ttl ${JSON.stringify(raw)}: must be a positive whole number of seconds`,
      );
    }
    if (ttl > limits.maxAccessTokenTtl) {
      throw new CliError(
        `--access-token-ttl ${raw}: must be at most ${limits.maxAccessTokenTtl} seconds (tokens.maxAccessTokenTtl)`,
      );
    }
    accessTokenTtl = ttl;
  }
  return {
    name,
    public: isPublic,
    trusted,
    redirectUris,
    postLogoutRedirectUris,
    grantTypes,
    scopes,
    audiences,
    accessTokenTtl,
  };
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
    .option('--scope <scope...>', `an allowed scope (repeatable; default: ${DEFAULT_SCOPES.join(' ')})`)
    .option('--audience <audience...>', 'an audience its access tokens may carry (repeatable)')
    .option('--public', 'a public client (no secret: native and browser apps)')
    .option('--trusted', 'may use the password grant and skips consent')
    .option('--access-token-ttl <seconds>', 'access token lifetime (default: tokens.accessTokenTtl)')
    .option('--json', 'print the client as JSON')
    .action(async (options: AddOptions, command: Command) => {
      const config = ctx.config(command);
      const settings = clientSettings(options, config.tokens);
      const clientSecret = settings.public ? undefined : generateSecret();
      await ctx.withServices(config, async ({ storage, clock }) => {
        let client: ClientRecord;
        try {
          client = await storage.clients.create({
            ...settings,
            clientId: generateClientId(),
            secretHash: clientSecret === undefined ? null : await hashSecret(clientSecret),
            refreshTokenTtl: config.tokens.refreshTokenTtl,
            createdAt: new Date(clock.now()),
          });
        } catch (error) {
          // 80 random bits make a collision practically impossible; say so plainly if it happens.
          if (error instanceof StorageConflictError)
            throw new CliError('a client with the generated id exists; try again');
          throw error;
        }
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
      await ctx.withServices(ctx.config(command), async ({ storage }) => {
        const all = await storage.clients.list();
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
      await ctx.withServices(ctx.config(command), async ({ storage }) => {
        if (!(await storage.clients.remove(clientId))) throw new CliError(`no client ${clientId}`);
        ctx.out(`client ${clientId} removed`);
      });
    });
}
