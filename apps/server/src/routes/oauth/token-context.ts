import { LoginThrottle, type TokenEndpointContext } from '@idgate/core';
import type { FastifyRequest } from 'fastify';
import { directoryOf } from '../../cache/directory.js';
import { effectiveUsers } from '../../federation/effective-users.js';
import { externalPasswordCheck } from '../../federation/password-providers.js';
import { instrumentLoginAttempts, metricsFor } from '../../metrics.js';
import type { Services } from '../../services.js';

/** The context of the grant handlers, shared by the token endpoint and the federation callback. */
export function tokenEndpointContext(
  services: Services,
  request: FastifyRequest,
  throttle: LoginThrottle,
): TokenEndpointContext {
  const { tokens } = services.config;
  const users = effectiveUsers(services);
  return {
    issuer: services.config.issuer,
    keys: services.keys(),
    clock: services.clock,
    // From memory in a running server (kept current by the change feed), from storage otherwise.
    findClient: (id) => directoryOf(services)?.findClient(id) ?? services.storage.clients.findById(id),
    passwords: {
      findUserByUsername: (username) => users.findByUsername(username),
      hasher: services.hasher,
      dummyHash: services.dummyHash,
    },
    storage: { ...services.storage, users },
    lifetimes: {
      idToken: tokens.idTokenTtl,
      grant: tokens.grantTtl,
      maxAccessToken: services.keyPolicy.maxTokenLifetimeSeconds,
    },
    refreshForTrustedClients: tokens.refreshForTrustedClients,
    externalPasswords: (name) => externalPasswordCheck(services, name),
    throttle,
    sourceAddress: request.ip,
  };
}

/** One throttle per server: every replica reads the same shared records. */
export function loginThrottle(services: Services): LoginThrottle {
  return new LoginThrottle(
    instrumentLoginAttempts(services.storage.loginAttempts, metricsFor(services)),
    services.config.bruteForce,
    services.clock,
  );
}
