import type { ApiKeyRecord } from '@idgate/core';
import type { AdminPorts } from '@idgate/core/admin';
import type { AuditActor } from '@idgate/schema';
import { offloadedEcJws } from './crypto/node-jws.js';
import type { Services } from './services.js';
import { withSigningKeyLock } from './storage/locks.js';

/**
 * The ports core's administrative use cases run over, from a server's services: the CLI and the
 * admin API call the same use cases through them.
 * @example await createApiKey(adminPorts(services), { name: 'ci', scopes: ['admin'] });
 */
export function adminPorts(services: Services): AdminPorts {
  const { storage, database, config } = services;
  return {
    storage,
    clock: services.clock,
    random: services.random,
    auditIds: services.auditIds,
    hasher: services.hasher,
    keyPolicy: services.keyPolicy,
    lifetimes: config.tokens,
    declaredProviders: config.identityProviders,
    passwordPolicy: config.passwordPolicy,
    loginThrottle: config.bruteForce,
    lockSigningKeys: (work) => withSigningKeyLock(storage, database, work),
    // `trusts test` checks subject tokens as the token exchange does (see context.ts).
    jwsCrypto: offloadedEcJws,
  };
}

/** How many API keys' acting ports {@link actingAdminPorts} keeps: far more admin keys than a server has. */
const ACTING_KEYS = 256;

/**
 * The administrative ports acting for an API key: `ports` with the key as the actor of every
 * change they record (`api-key`, its id, its prefix as the name) and its scopes as those it may
 * give (`actingScopes`: no key makes a key stronger than itself). Built once per key and kept,
 * the most recently used {@link ACTING_KEYS} of them; an admin request adds only its own origin
 * (`auditOrigin`). The actor and the origin travel with the ports, not in an AsyncLocalStorage:
 * on Node 20 one of those, once used, puts a hook on every promise of the process (TokenReview's
 * included) for good.
 * @example const acting = actingAdminPorts(context.admin); request.admin = { ...acting(key), auditOrigin };
 */
export function actingAdminPorts(
  ports: AdminPorts,
  limit = ACTING_KEYS,
): (key: Pick<ApiKeyRecord, 'id' | 'prefix' | 'scopes'>) => AdminPorts {
  // A key's id, prefix and scopes never change, so what is kept for an id stays right; a Map iterates in
  // insertion order, so its first entry is the one used longest ago.
  const acting = new Map<string, AdminPorts>();
  return (key) => {
    const kept = acting.get(key.id);
    if (kept !== undefined) {
      acting.delete(key.id);
      acting.set(key.id, kept);
      return kept;
    }
    const actor: AuditActor = { kind: 'api-key', id: key.id, name: key.prefix };
    const made: AdminPorts = { ...ports, auditActor: () => actor, actingScopes: key.scopes };
    if (acting.size >= limit) acting.delete(acting.keys().next().value as string);
    acting.set(key.id, made);
    return made;
  };
}
