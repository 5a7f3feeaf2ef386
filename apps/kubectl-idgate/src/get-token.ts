import type { ExecCredential } from '@idgate/schema';
import {
  createNativeClient,
  discoverIssuer,
  IdgateHttpError,
  IdgateSchemaError,
  IdgateSdkError,
  type NativeClient,
  type TokenResponse,
} from '@idgate/sdk';
import type { GetTokenArgs } from './args.js';
import { canOpenBrowser } from './browser.js';
import { type AccessEntry, TokenCache } from './cache.js';
import { PluginError } from './errors.js';
import { execCredential, readExecInfo } from './exec-credential.js';
import { browserSignIn, deviceSignIn } from './sign-in.js';

/** A cached access token is used while it has more than this left. */
export const MIN_REMAINING_MS = 30_000;

/** What the plugin needs from its surroundings; tests give their own. */
export interface PluginContext {
  env: NodeJS.ProcessEnv;
  /** Writes one line for the person (stderr). */
  log: (line: string) => void;
  /** Milliseconds since the epoch. */
  now: () => number;
  platform: NodeJS.Platform;
  fetch?: typeof fetch | undefined;
}

/**
 * The exec credential plugin: a token for `args.audience` from the cache, a silent refresh, or a
 * sign-in (browser or device), answered as an ExecCredential in kubectl's apiVersion.
 */
export async function getToken(args: GetTokenArgs, context: PluginContext): Promise<ExecCredential> {
  const info = readExecInfo(context.env.KUBERNETES_EXEC_INFO);
  const cache = await TokenCache.open(args.cacheDir);
  const answer = (entry: AccessEntry) => execCredential(info.apiVersion, entry.accessToken, entry.expiresAt);
  const fresh = (entry: AccessEntry | undefined): entry is AccessEntry =>
    entry !== undefined && entry.expiresAt - context.now() > MIN_REMAINING_MS;

  const cached = await cache.readAccess(args.issuer, args.clientId, args.audience);
  if (fresh(cached)) return answer(cached);

  return cache.locked(args.issuer, args.clientId, async () => {
    // another kubectl may have refreshed while this one waited for the lock
    const again = await cache.readAccess(args.issuer, args.clientId, args.audience);
    if (fresh(again)) return answer(again);

    const client = await connect(args, context);
    const grant = await cache.readGrant(args.issuer, args.clientId);
    let tokens: TokenResponse | undefined;
    if (grant !== undefined) {
      try {
        tokens = await client.refresh({ refreshToken: grant.refreshToken, resource: args.audience });
      } catch (error) {
        if (!(error instanceof IdgateHttpError) || error.oauthError === undefined)
          throw issuerError(args.issuer, error);
        // invalid_grant: the sign-in ended (revoked, expired); anything else (invalid_target...): sign in again
        if (error.oauthError.error === 'invalid_grant') await cache.clearSignIn(args.issuer, args.clientId);
        context.log(
          `Your sign-in at ${args.issuer} cannot be renewed (${error.oauthError.error}): signing in again.`,
        );
      }
    }
    tokens ??= await signIn(client, args, info.interactive, context);

    const expiresAt = context.now() + tokens.expires_in * 1000;
    // the new refresh token first: the old one is spent, whatever happens next
    if (tokens.refresh_token !== undefined) {
      await cache.writeGrant({
        issuer: args.issuer,
        clientId: args.clientId,
        refreshToken: tokens.refresh_token,
      });
    }
    const entry: AccessEntry = {
      issuer: args.issuer,
      clientId: args.clientId,
      audience: args.audience,
      accessToken: tokens.access_token,
      expiresAt,
    };
    await cache.writeAccess(entry);
    return answer(entry);
  });
}

async function connect(
  args: { issuer: string; clientId: string },
  context: PluginContext,
): Promise<NativeClient> {
  try {
    const metadata = await discoverIssuer(args.issuer, { fetch: context.fetch });
    return createNativeClient({ metadata, clientId: args.clientId, fetch: context.fetch, now: context.now });
  } catch (error) {
    throw issuerError(args.issuer, error);
  }
}

async function signIn(
  client: NativeClient,
  args: GetTokenArgs,
  interactive: boolean | undefined,
  context: PluginContext,
): Promise<TokenResponse> {
  const useDevice =
    args.device ||
    interactive === false ||
    (!args.noBrowser && !canOpenBrowser(context.env, context.platform));
  try {
    if (useDevice) return await deviceSignIn(client, { audience: args.audience, log: context.log });
    return await browserSignIn(client, {
      audience: args.audience,
      listen: args.listen,
      open: !args.noBrowser,
      timeoutMs: args.timeoutSeconds * 1000,
      log: context.log,
    });
  } catch (error) {
    throw issuerError(args.issuer, error);
  }
}

/** A failure talking to the issuer, as one line (the SDK's messages are already free of tokens). */
export function issuerError(issuer: string, error: unknown): PluginError {
  if (error instanceof PluginError) return error;
  if (error instanceof IdgateHttpError) {
    // the SDK's message, whose quote of the answer has every token of the request redacted
    const detail = error.message.replace(/^.*? failed with \d+: /, '');
    return new PluginError(`${issuer} refused the request: ${detail}`, { cause: error });
  }
  if (error instanceof IdgateSchemaError) {
    return new PluginError(`the issuer ${issuer} answered something unexpected: ${error.message}`, {
      cause: error,
    });
  }
  if (error instanceof IdgateSdkError) {
    return new PluginError(`cannot reach the issuer ${issuer}: ${error.message}`, { cause: error });
  }
  return new PluginError(`unexpected failure: ${error instanceof Error ? error.message : String(error)}`, {
    cause: error,
  });
}
