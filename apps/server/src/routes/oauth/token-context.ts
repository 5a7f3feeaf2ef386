import { revalidateUpstream, type Storage, type TokenEndpointContext } from '@idgate/core';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { effectiveUsers } from '../../federation/effective-users.js';
import { externalPasswordCheck } from '../../federation/password-providers.js';

/** The context of the grant handlers, shared by the token endpoint and the federation callback. */
export function tokenEndpointContext(idgate: AppContext, request: FastifyRequest): TokenEndpointContext {
  const { tokens } = idgate.config;
  // A grant reads its user by id as tokens describe them: the directory holds exactly that, kept
  // in step with every change to the user and their identities, so a disabled user is refused at once.
  const subjects = (through?: Storage) => ({
    ...effectiveUsers(through ?? idgate.storage),
    findById: (id: string) => idgate.directory.findSubject(id, through),
  });
  const users = subjects();
  return {
    issuer: idgate.config.issuer,
    keys: idgate.keys(),
    clock: idgate.clock,
    random: idgate.random,
    auditIds: idgate.auditIds,
    findClient: (id) => idgate.storage.clients.findById(id),
    passwords: {
      findUserByUsername: (username) => users.findByUsername(username),
      hasher: idgate.hasher,
      dummyHash: idgate.dummyHash,
    },
    storage: {
      ...idgate.storage,
      users,
      // A grant step is one transaction and reads its user inside it, as above; a user the
      // directory does not hold yet is read through the transaction.
      transaction: (work) => idgate.storage.transaction((tx) => work({ ...tx, users: subjects(tx) })),
    },
    lifetimes: {
      idToken: tokens.idTokenTtl,
      grant: tokens.grantTtl,
      maxAccessToken: idgate.maxTokenLifetimeSeconds,
    },
    refreshForTrustedClients: tokens.refreshForTrustedClients,
    externalPasswords: (name) => externalPasswordCheck(idgate, name, request.log),
    throttle: idgate.throttle,
    clusterAudiences: async () => (await idgate.storage.clusters.list()).map((cluster) => cluster.audience),
    sourceAddress: request.ip,
    refreshReuse: idgate.refreshReuse,
    auditBatcher: idgate.audit.issuedTokens,
    revalidate: (grant) =>
      revalidateUpstream(grant, {
        clock: idgate.clock,
        intervalSeconds: idgate.config.federation.revalidateInterval,
        secret: idgate.secret,
        storage: idgate.storage,
        provider: async (name) => {
          const provider = await idgate.providers.get(name);
          return provider === undefined || provider.config.disabled ? undefined : provider;
        },
        // Logged once per grant per interval: the re-check is not tried again sooner.
        onUnavailable: (grant, reason) =>
          request.log.warn(
            { grantId: grant.id, provider: grant.upstream?.provider, reason },
            'identity provider unreachable on refresh; the grant keeps its current data',
          ),
      }),
  };
}
