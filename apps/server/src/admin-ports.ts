import type { AdminPorts } from '@idgate/core/admin';
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
  };
}
