import { ConnectorError } from '../connectors/types.js';
import { OAuthProtocolError } from '../errors.js';
import type { ExternalPasswordCheck } from '../grants/context.js';
import { grantUpstream } from '../grants/upstream-revalidation.js';
import type { RequestLog } from '../ports/caller.js';
import { type IdentityMappingContext, mapExternalIdentity } from './external.js';
import { type IdentityProviders, mappingPolicy } from './providers.js';

/** What a directory sign-in reads and writes. */
export interface DirectorySignInContext extends IdentityMappingContext {
  providers: IdentityProviders;
  /** The secret the upstream state a grant keeps is sealed with. */
  secret: string;
}

/**
 * The username/password check of an enabled password provider (LDAP), mapped to a local user the
 * same way as any external sign-in; undefined when `name` is no such provider. A directory that
 * cannot be reached is `temporarily_unavailable`, never "wrong password". `log` hears why a
 * sign-in was refused (info) or failed (warn): the operator's answer to "why can't bob sign in",
 * which the person signing in is never told. Never the password.
 * @example const check = await directoryPasswordCheck('corp-ldap', context, log);
 */
export async function directoryPasswordCheck(
  name: string,
  context: DirectorySignInContext,
  log?: RequestLog,
): Promise<ExternalPasswordCheck | undefined> {
  const provider = await context.providers.get(name);
  if (provider === undefined || provider.config.disabled || provider.connector.kind !== 'password')
    return undefined;
  const connector = provider.connector;
  return async (username, password) => {
    let identity: Awaited<ReturnType<typeof connector.authenticate>>;
    try {
      identity = await connector.authenticate(username, password, {
        onRefusal: (reason) => log?.info({ provider: name, username, reason }, 'directory sign-in refused'),
      });
    } catch (error) {
      if (error instanceof ConnectorError) {
        const { code, message: reason } = error;
        log?.warn({ provider: name, username, code, reason }, 'directory sign-in failed');
        throw new OAuthProtocolError('temporarily_unavailable', error.message, { cause: error });
      }
      throw error;
    }
    if (identity === null) return { ok: false, failure: 'invalid_credentials' };
    const mapped = await mapExternalIdentity(identity, mappingPolicy(provider), context);
    if (!mapped.ok)
      return {
        ok: false,
        failure: mapped.reason,
        ...(mapped.userId === undefined ? {} : { userId: mapped.userId }),
      };
    const now = new Date(context.clock.now());
    const upstream = await grantUpstream(provider.config.name, identity, context.secret, now);
    return { ok: true, user: mapped.user, upstream, groupsDropped: mapped.groupsDropped };
  };
}
