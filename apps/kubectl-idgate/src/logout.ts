import { createNativeClient, discoverIssuer } from '@idgate/sdk';
import type { LogoutArgs } from './args.js';
import { TokenCache } from './cache.js';
import { PluginError } from './errors.js';
import type { PluginContext } from './get-token.js';
import { issuerError } from './get-token.js';

/**
 * Signs out: revokes the refresh token of each matching sign-in (RFC 7009), which ends its grant
 * on the server, and removes its cached tokens. With `--cluster`/`--audience`, the sign-ins that
 * hold a token for it; with `--issuer`/`--client-id`, those; with neither, every one. The local
 * cache is cleared even when the issuer cannot be reached, and that failure is reported. Files of
 * the cache that hold no valid entry are removed, whatever the options.
 */
export async function logout(args: LogoutArgs, context: PluginContext): Promise<void> {
  const cache = await TokenCache.open(args.cacheDir);
  // a file that cannot be read holds nothing to revoke, and would stop every get-token: gone first
  for (const path of await cache.removeUnreadable())
    context.log(`Removed ${path}: it was not valid (nothing in it could be revoked).`);
  const signIns = (await cache.signIns()).filter(
    (s) =>
      (args.issuer === undefined || s.issuer === args.issuer) &&
      (args.clientId === undefined || s.clientId === args.clientId) &&
      (args.audience === undefined || s.audiences.includes(args.audience)),
  );
  if (signIns.length === 0) {
    context.log('Not signed in: nothing to do.');
    return;
  }
  const failures: string[] = [];
  for (const signIn of signIns) {
    await cache.locked(signIn.issuer, signIn.clientId, async () => {
      const grant = await cache.readGrant(signIn.issuer, signIn.clientId);
      try {
        if (grant !== undefined) {
          const metadata = await discoverIssuer(signIn.issuer, { fetch: context.fetch });
          const client = createNativeClient({ metadata, clientId: signIn.clientId, fetch: context.fetch });
          await client.revoke({ token: grant.refreshToken, tokenTypeHint: 'refresh_token' });
        }
      } catch (error) {
        failures.push(issuerError(signIn.issuer, error).message);
      } finally {
        await cache.clearSignIn(signIn.issuer, signIn.clientId);
      }
    });
    context.log(`Signed out of ${signIn.issuer} (client ${signIn.clientId}).`);
  }
  if (failures.length > 0) {
    throw new PluginError(
      `the cached tokens are removed, but revoking the sign-in failed: ${failures.join('; ')}`,
    );
  }
}
