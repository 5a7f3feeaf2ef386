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
import { browserSignIn, deviceSignIn, SignInRefused } from './sign-in.js';
import { satisfies, stepUpAcr, tokenAcr } from './step-up.js';

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
 * sign-in (browser or device), answered as an ExecCredential in kubectl's apiVersion. A sign-in
 * asks for every cluster of the issuer and client the plugin knows of (set up, or run for before),
 * so that its refreshes serve them all: the issuer lets a refresh narrow what a sign-in approved,
 * never widen it (RFC 8707). A cluster the sign-in did not cover takes one more sign-in, for all.
 * A cluster that requires a second factor (learnt from idgate's refusal of a refresh) takes a
 * token with its `acr` only: one more sign-in with `acr_values`, never a second one in a run.
 */
export async function getToken(args: GetTokenArgs, context: PluginContext): Promise<ExecCredential> {
  const info = readExecInfo(context.env.KUBERNETES_EXEC_INFO);
  const cache = await TokenCache.open(args.cacheDir);
  const answer = (entry: AccessEntry) => execCredential(info.apiVersion, entry.accessToken, entry.expiresAt);
  const fresh = (entry: AccessEntry | undefined): entry is AccessEntry =>
    entry !== undefined && entry.expiresAt - context.now() > MIN_REMAINING_MS;

  const requiredAcr = async () => (await cache.readRequiredAcr(args.issuer, args.clientId))[args.audience];

  const cached = await cache.readAccess(args.issuer, args.clientId, args.audience);
  if (fresh(cached) && satisfies(cached.acr, await requiredAcr())) return answer(cached);

  return cache.locked(args.issuer, args.clientId, async () => {
    // the acr this cluster needs: known from an earlier refusal, or learnt below
    let needed = await requiredAcr();
    // another kubectl may have refreshed while this one waited for the lock
    const again = await cache.readAccess(args.issuer, args.clientId, args.audience);
    if (fresh(again) && satisfies(again.acr, needed)) return answer(again);

    const known = await cache.rememberClusters(args.issuer, args.clientId, [args.audience]);
    const client = await connect(args, context);
    const grant = await cache.readGrant(args.issuer, args.clientId);
    let tokens: TokenResponse | undefined;
    let resources: string[] | undefined;
    // a sign-in that still works but does not reach this cluster: ended once its successor exists
    let superseded: string | undefined;
    const stepUp = (acr: string, refreshToken: string) => {
      context.log(
        `${args.audience} requires a sign-in with a second factor (acr ${acr}): signing in again with acr_values=${acr}.`,
      );
      needed = acr;
      superseded = refreshToken;
      tokens = undefined;
    };
    if (grant !== undefined && grant.audiences !== undefined && !grant.audiences.includes(args.audience)) {
      context.log(
        `Your sign-in at ${args.issuer} does not cover ${args.audience}: signing in again for every cluster set up.`,
      );
      superseded = grant.refreshToken;
    } else if (grant !== undefined) {
      try {
        const refreshed = await client.refresh({ refreshToken: grant.refreshToken, resource: args.audience });
        tokens = refreshed;
        resources = grant.audiences;
        // a grant without the second factor this cluster is known to need: its token is no use
        if (!satisfies(tokenAcr(refreshed.access_token), needed)) {
          // the rotated refresh token is the live one, whatever the sign-in below does
          if (refreshed.refresh_token !== undefined)
            await cache.writeGrant({ ...grant, refreshToken: refreshed.refresh_token });
          stepUp(needed as string, refreshed.refresh_token ?? grant.refreshToken);
        }
      } catch (error) {
        if (!(error instanceof IdgateHttpError) || error.oauthError === undefined)
          throw issuerError(args.issuer, error);
        const acr = stepUpAcr(error.oauthError);
        if (acr !== undefined) {
          // the grant lives on (idgate did not spend the refresh token) until its successor exists
          await cache.requireAcr(args.issuer, args.clientId, args.audience, acr);
          stepUp(acr, grant.refreshToken);
        } else {
          // invalid_grant: the sign-in ended (revoked, expired); anything else (invalid_target: a
          // sign-in that did not ask for this cluster): sign in again
          if (error.oauthError.error === 'invalid_grant') await cache.clearSignIn(args.issuer, args.clientId);
          else superseded = grant.refreshToken;
          context.log(
            `Your sign-in at ${args.issuer} cannot be renewed (${error.oauthError.error}): signing in again.`,
          );
        }
      }
    }
    if (tokens === undefined) {
      const signedIn = await signInFor(client, args, known, cache, info.interactive, context, needed);
      // one sign-in a run: a sign-in that still lacks the acr is an error, not a reason to loop
      const acr = tokenAcr(signedIn.tokens.access_token);
      if (!satisfies(acr, needed)) {
        if (signedIn.tokens.refresh_token !== undefined) {
          await client
            .revoke({ token: signedIn.tokens.refresh_token, tokenTypeHint: 'refresh_token' })
            .catch(() => undefined);
        }
        throw new PluginError(
          `${args.audience} requires a sign-in with a second factor (acr ${needed}), and the sign-in at ${args.issuer} had none (acr ${acr ?? 'absent'}): sign in with your authenticator app or passkey, or ask an administrator to set one up for you`,
        );
      }
      tokens = signedIn.tokens;
      resources = signedIn.resources;
      if (superseded !== undefined && needed !== undefined) {
        // tokens of the other clusters from the sign-in without it: renewed from this one instead
        for (const audience of known) {
          if (audience === args.audience) continue;
          const other = await cache.readAccess(args.issuer, args.clientId, audience);
          if (other !== undefined && other.acr !== acr)
            await cache.removeAccess(args.issuer, args.clientId, audience);
        }
      }
    }

    const expiresAt = context.now() + tokens.expires_in * 1000;
    // the new refresh token first: the old one is spent, whatever happens next
    if (tokens.refresh_token !== undefined) {
      await cache.writeGrant({
        issuer: args.issuer,
        clientId: args.clientId,
        refreshToken: tokens.refresh_token,
        ...(resources === undefined ? {} : { audiences: resources }),
      });
    }
    if (superseded !== undefined && tokens.refresh_token !== undefined) {
      // the replaced sign-in would otherwise live on at the issuer until it expires
      await client.revoke({ token: superseded, tokenTypeHint: 'refresh_token' }).catch(() => undefined);
    }
    const entry: AccessEntry = {
      issuer: args.issuer,
      clientId: args.clientId,
      audience: args.audience,
      accessToken: tokens.access_token,
      expiresAt,
    };
    const acr = tokenAcr(tokens.access_token);
    if (acr !== undefined) entry.acr = acr;
    await cache.writeAccess(entry);
    return answer(entry);
  });
}

/**
 * Signs in for every known cluster (`known`, this one first), for a token for this one. An issuer
 * that refuses some of them (`invalid_target`: a cluster it no longer has) is asked again without
 * them, and they are forgotten: those it named, or else every one but this cluster.
 */
async function signInFor(
  client: NativeClient,
  args: GetTokenArgs,
  known: readonly string[],
  cache: TokenCache,
  interactive: boolean | undefined,
  context: PluginContext,
  acr: string | undefined,
): Promise<{ tokens: TokenResponse; resources: string[] }> {
  const resources = [args.audience, ...known.filter((audience) => audience !== args.audience)];
  try {
    return { tokens: await signIn(client, args, resources, interactive, context, acr), resources };
  } catch (error) {
    const refused = refusedTarget(error);
    if (refused === undefined || resources.length === 1) throw issuerError(args.issuer, error);
    const named = resources.filter((audience) => audience !== args.audience && refused.includes(audience));
    const kept =
      named.length > 0 ? resources.filter((audience) => !named.includes(audience)) : [args.audience];
    context.log(
      `${args.issuer} refused some of the clusters set up (invalid_target): signing in for ${kept.join(', ')}.`,
    );
    await cache.writeClusters({ issuer: args.issuer, clientId: args.clientId, audiences: kept });
    try {
      return { tokens: await signIn(client, args, kept, interactive, context, acr), resources: kept };
    } catch (again) {
      throw issuerError(args.issuer, again);
    }
  }
}

/** The issuer's description of an `invalid_target` refusal of a sign-in, or undefined for any other failure. */
function refusedTarget(error: unknown): string | undefined {
  if (error instanceof IdgateHttpError && error.oauthError?.error === 'invalid_target')
    return error.oauthError.error_description ?? '';
  if (error instanceof SignInRefused && error.error === 'invalid_target') return error.errorDescription ?? '';
  return undefined;
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
  resources: readonly string[],
  interactive: boolean | undefined,
  context: PluginContext,
  acr: string | undefined,
): Promise<TokenResponse> {
  const acrValues = acr === undefined ? {} : { acrValues: acr };
  const useDevice =
    args.device ||
    interactive === false ||
    (!args.noBrowser && !canOpenBrowser(context.env, context.platform));
  if (useDevice)
    return deviceSignIn(client, { audience: args.audience, resources, log: context.log, ...acrValues });
  return browserSignIn(client, {
    audience: args.audience,
    resources,
    ...acrValues,
    listen: args.listen,
    open: !args.noBrowser,
    env: context.env,
    platform: context.platform,
    timeoutMs: args.timeoutSeconds * 1000,
    log: context.log,
  });
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
    // the SDK names the request and the server; the issuer is named here already
    const detail = error.message.replace(/^.*? failed: (cannot reach the issuer at \S+: )?/, '');
    return new PluginError(`cannot reach the issuer ${issuer}: ${detail}`, { cause: error });
  }
  return new PluginError(`unexpected failure: ${error instanceof Error ? error.message : String(error)}`, {
    cause: error,
  });
}
