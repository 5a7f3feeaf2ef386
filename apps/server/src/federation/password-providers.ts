import {
  ConnectorError,
  type ExternalPasswordCheck,
  grantUpstream,
  mapExternalIdentity,
  OAuthProtocolError,
} from '@idgate/core';
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';
import { mappingPolicy } from './registry.js';

/**
 * The username/password check of an enabled password provider (LDAP), mapped to a local user the
 * same way as any external sign-in; undefined when `name` is no such provider. A directory that
 * cannot be reached is `temporarily_unavailable`, never "wrong password". `log` hears why a
 * sign-in was refused (info) or failed (warn): the operator's answer to "why can't bob sign in",
 * which the person signing in is never told. Never the password.
 */
export async function externalPasswordCheck(
  idgate: AppContext,
  name: string,
  log: Pick<FastifyBaseLogger, 'info' | 'warn'>,
): Promise<ExternalPasswordCheck | undefined> {
  const provider = await idgate.providers.get(name);
  if (provider === undefined || provider.config.disabled || provider.connector.kind !== 'password')
    return undefined;
  const connector = provider.connector;
  return async (username, password) => {
    let identity: Awaited<ReturnType<typeof connector.authenticate>>;
    try {
      identity = await connector.authenticate(username, password, {
        onRefusal: (reason) => log.info({ provider: name, username, reason }, 'directory sign-in refused'),
      });
    } catch (error) {
      if (error instanceof ConnectorError) {
        const { code, message: reason } = error;
        log.warn({ provider: name, username, code, reason }, 'directory sign-in failed');
        throw new OAuthProtocolError('temporarily_unavailable', error.message, { cause: error });
      }
      throw error;
    }
    if (identity === null) return { ok: false, failure: 'invalid_credentials' };
    const mapped = await mapExternalIdentity(identity, mappingPolicy(provider), idgate);
    if (!mapped.ok) return { ok: false, failure: mapped.reason };
    const now = new Date(idgate.clock.now());
    const upstream = await grantUpstream(provider.config.name, identity, idgate.secret, now);
    return { ok: true, user: mapped.user, upstream };
  };
}
