import type { AdminPorts } from '../admin/ports.js';
import { authenticateApiKey, isApiKeyLive, lacksScope } from '../api-keys/api-key.js';
import { holdsScope } from '../api-keys/scopes.js';
import { createAuditBatcher } from '../audit/batcher.js';
import { completeAuditEvents, createAuditEventIds, originFields } from '../audit/record.js';
import { giveConsent } from '../authorize/consent.js';
import { issueAuthorizationCode, nextAuthorizationStep } from '../authorize/flow.js';
import { type AuthorizationRequestOptions, validateAuthorizationRequest } from '../authorize/request.js';
import { authenticateClient } from '../clients/authenticate.js';
import { clustersNeedingMfa } from '../clusters/mfa.js';
import {
  approveDeviceAuthorization,
  type DeviceApprovalContext,
  denyDeviceAuthorization,
  enterUserCode,
  findPendingDeviceAuthorization,
} from '../device/approval.js';
import { startDeviceAuthorization } from '../device/authorization.js';
import { buildProviderMetadata } from '../discovery.js';
import { ACR } from '../factors/assurance.js';
import {
  confirmTotpEnrolment,
  listFactors,
  regenerateRecoveryCodes,
  removeFactors,
  requireSecondFactor,
  type SecondFactorContext,
  secondFactorNeed,
  startTotpEnrolment,
  verifySecondFactor,
} from '../factors/second-factor.js';
import {
  finishPasskeyRegistration,
  relyingPartyOf,
  startPasskeyAuthentication,
  startPasskeyRegistration,
  verifyPasskeyAssertion,
} from '../factors/webauthn.js';
import type { GrantStorage, TokenEndpointContext } from '../grants/context.js';
import { issueFederatedTokens } from '../grants/federation.js';
import { refreshSuccessorKey } from '../grants/refresh-token.js';
import { handleTokenRequest, TOKEN_ENDPOINT_GRANT_TYPES } from '../grants/token-endpoint.js';
import {
  DEFAULT_REVALIDATE_MAX_STALENESS,
  grantUpstream,
  revalidateUpstream,
} from '../grants/upstream-revalidation.js';
import type { Caller } from '../ports/caller.js';
import { pooledRandom, systemClock } from '../ports/runtime.js';
import type { Storage } from '../ports/storage.js';
import { grantResources } from '../scopes.js';
import { generateSecret } from '../secrets.js';
import { DEFAULT_LOGIN_THROTTLE, LoginThrottle } from '../security/login-throttle.js';
import { endBrowserSession } from '../sessions/end-session.js';
import { validateLogoutRequest } from '../sessions/logout.js';
import { directoryPasswordCheck } from '../sign-in/directory.js';
import { recordUpstreamRefusal, signInWithExternalIdentity } from '../sign-in/external.js';
import { signInWithPassword } from '../sign-in/password.js';
import { mappingPolicy } from '../sign-in/providers.js';
import { reviewToken } from '../token-review/review.js';
import { type AccessTokenVerification, verifyAccessToken } from '../tokens/access-token.js';
import { checkAccessToken, type LiveTokenContext } from '../tokens/access-token-check.js';
import { type IntrospectionContext, introspectToken } from '../tokens/introspection.js';
import { revokeToken } from '../tokens/revocation.js';
import { userinfo } from '../tokens/userinfo.js';
import { createTrustKeySource } from '../trusts/keys.js';
import { groupSpends } from '../trusts/spent.js';
import { withIdentityGroups } from '../users/effective.js';
import type { IdgatePolicy, IdgatePorts } from './ports.js';
import type { Idgate } from './surface.js';

/**
 * Builds an idgate instance once — every grant, endpoint and sign-in over the ports and the
 * policy — and returns what a host drives: the token endpoint, token review, introspection,
 * userinfo, sign-in, federation, device approval, logout and the administrative ports. What
 * varies per request (address, user agent, the request's log) is passed with each call.
 * @example
 * const idgate = await createIdgate(
 *   { storage, hasher, keys: () => ring, providers },
 *   { issuer: 'https://id.example.com/oauth', keyPolicy, tokens },
 * );
 * const tokens = await idgate.token(form, request.headers.authorization, { address: request.ip });
 */
export async function createIdgate(ports: IdgatePorts, policy: IdgatePolicy): Promise<Idgate> {
  const { storage, hasher, providers, cache } = ports;
  const { issuer, keyPolicy, tokens } = policy;
  const clock = ports.clock ?? systemClock;
  const random = ports.random ?? pooledRandom();
  const auditIds = ports.auditIds ?? createAuditEventIds(random);
  const secret = keyPolicy.secret;
  const maxTokenLifetimeSeconds = keyPolicy.maxTokenLifetimeSeconds;
  // A valid hash verified for unknown usernames, so they cost as long as a wrong password.
  const dummyHash = await hasher.hash(generateSecret(random, 16));
  const throttle = new LoginThrottle(
    ports.loginAttempts ?? storage.loginAttempts,
    policy.loginThrottle ?? DEFAULT_LOGIN_THROTTLE,
    clock,
  );

  // A user as tokens describe them: their own groups and their linked identities' (read through
  // `through`, a transaction's storage, from inside one).
  const loadSubject = (through: Pick<Storage, 'users' | 'identities'>) => async (id: string) => {
    const user = await through.users.findById(id);
    return user === undefined ? undefined : withIdentityGroups(user, through.identities);
  };
  const subjectOf = loadSubject(storage);
  const findSubject = (id: string, through?: Pick<Storage, 'users' | 'identities'>) => {
    const load = through === undefined ? subjectOf : loadSubject(through);
    return cache === undefined ? load(id) : cache.subject(id, load);
  };
  const verifyNow = (token: string) => verifyAccessToken(ports.keys(), issuer, token, clock);
  const verify = (token: string): Promise<AccessTokenVerification> =>
    cache === undefined ? verifyNow(token) : cache.verification(token, verifyNow);
  const findClient = (id: string) => storage.clients.findById(id);
  const notBefore = (clientId: string | null, userId: string | null) =>
    storage.notBefore.latestFor(clientId, userId);

  const live: LiveTokenContext = {
    issuer,
    get keys() {
      return ports.keys();
    },
    clock,
    findUser: (id) => findSubject(id),
    findClient,
    isRevoked: (kind, value) => storage.revocations.isRevoked(kind, value, new Date(clock.now())),
    notBefore,
    verify,
    findTrust: (name) => storage.trusts.findByName(name),
  };
  // Not a spread of `live`: that would read its key ring once, here, for good.
  const introspection: IntrospectionContext = {
    issuer,
    get keys() {
      return ports.keys();
    },
    clock,
    findUser: live.findUser,
    findClient,
    isRevoked: live.isRevoked,
    notBefore,
    verify,
    // A token exchange's token is live while its trust is.
    findTrust: (name) => storage.trusts.findByName(name),
    storage,
  };

  // Users, wherever a grant reads them, as tokens describe them (never written through here).
  const grantUsers = (through: Pick<Storage, 'users' | 'identities'>): GrantStorage['users'] => ({
    ...through.users,
    findById: (id) => findSubject(id, through === storage ? undefined : through),
    findByUsername: async (username) => {
      const user = await through.users.findByUsername(username);
      return user === undefined ? undefined : withIdentityGroups(user, through.identities);
    },
  });
  const users = grantUsers(storage);
  const factorContext: SecondFactorContext = {
    storage,
    clock,
    random,
    secret,
    productName: policy.productName ?? 'idgate',
    throttle,
    auditIds,
  };
  const webauthnContext = {
    ...factorContext,
    storage,
    relyingParty: relyingPartyOf(issuer, factorContext.productName),
    library: ports.webauthn,
  };
  const mapping = { storage, clock, auditIds };
  const directory = { ...mapping, providers, secret, random };
  const externalPasswords = (name: string, log?: Caller['log']) =>
    directoryPasswordCheck(name, directory, log);
  const passwords = {
    findUserByUsername: (username: string) => users.findByUsername(username),
    hasher,
    dummyHash,
  };
  const revalidation = {
    clock,
    intervalSeconds: policy.revalidateInterval ?? 0,
    maxStalenessSeconds: policy.revalidateMaxStaleness ?? DEFAULT_REVALIDATE_MAX_STALENESS,
    secret,
    storage,
    provider: async (name: string) => {
      const provider = await providers.get(name);
      return provider === undefined || provider.config.disabled ? undefined : provider;
    },
  };
  // How the group-commit writers start a batch (the audit batcher's and the exchange's).
  const batching = ports.schedule === undefined ? {} : { schedule: ports.schedule };
  // One group-commit writer of the events of paths that write nothing else (tokens of
  // client_credentials, token-exchange refusals, API keys refused a scope).
  const auditBatcher = createAuditBatcher(storage, batching);
  const trustKeys =
    ports.trustKeys ?? createTrustKeySource({ fetch: (input, init) => globalThis.fetch(input, init), clock });
  const tokenEndpoint: TokenEndpointContext = {
    issuer,
    get keys() {
      return ports.keys();
    },
    clock,
    random,
    auditIds,
    findClient,
    notBefore,
    passwords,
    storage: {
      ...storage,
      users,
      // A grant step is one transaction and reads its user inside it.
      transaction: (work) => storage.transaction((tx) => work({ ...tx, users: grantUsers(tx) })),
    },
    lifetimes: {
      idToken: tokens.idTokenTtl,
      grant: tokens.grantTtl,
      maxAccessToken: maxTokenLifetimeSeconds,
    },
    refreshForTrustedClients: tokens.refreshForTrustedClients ?? false,
    externalPasswords,
    throttle,
    clusterAudiences: async () => (await storage.clusters.list()).map((cluster) => cluster.audience),
    mfaClusters: async () => (await storage.clusters.list()).filter((cluster) => cluster.requireMfa),
    exchange: {
      trusts: () => storage.trusts.list(),
      clusters: () => storage.clusters.list(),
      keys: trustKeys,
      ...(ports.jwsCrypto === undefined ? {} : { jws: ports.jwsCrypto }),
      spend: groupSpends(storage, batching),
      checkOwnToken: (token) => checkAccessToken(token, live),
    },
    refreshReuse: {
      windowSeconds: tokens.refreshReuseWindow ?? 0,
      successorKey: await refreshSuccessorKey(secret),
    },
    auditBatcher,
    revalidate: (grant, log) =>
      revalidateUpstream(grant, {
        ...revalidation,
        // Told once per grant per interval: the re-check is not tried again sooner.
        onUnavailable: (grant, reason, outcome) =>
          log?.warn(
            {
              grantId: grant.id,
              provider: grant.upstream?.provider,
              reason,
              validatedAt: grant.upstream?.validatedAt.toISOString(),
            },
            outcome === 'unavailable'
              ? 'identity provider unreachable on refresh; the grant keeps its current data'
              : 'identity provider unreachable on refresh and the account unconfirmed for longer than the limit; the grant is revoked',
          ),
      }),
  };
  // The login page's sign-in answers a session, not tokens: the user as stored is enough.
  const passwordSignIn = {
    passwords: {
      ...passwords,
      findUserByUsername: (username: string) => storage.users.findByUsername(username),
    },
    externalPasswords,
    throttle,
    audit: { events: storage.auditEvents, clock, ids: auditIds },
  };
  const device: DeviceApprovalContext = { clock, auditIds, findClient, storage, throttle };
  const deviceStart = {
    clock,
    random,
    findClient,
    storage,
    verificationUri: `${issuer}/device`,
    ...(policy.device?.codeTtl === undefined ? {} : { lifetimeSeconds: policy.device.codeTtl }),
    ...(policy.device?.interval === undefined ? {} : { intervalSeconds: policy.device.interval }),
  };
  const authorizationOptions: AuthorizationRequestOptions = {
    findClient,
    allowPlainPkce: policy.pkce?.allowPlain ?? false,
    requirePkce: policy.pkce?.requireForConfidentialClients ?? false,
  };
  const steps = { clock, consents: storage.consents };
  const stepsAfterConsent = { ...steps, consentGiven: true };
  const session = { storage, clock, auditIds, maxTokenLifetimeSeconds };
  const revocation = { issuer, clock, auditIds, storage, maxTokenLifetimeSeconds };
  const admin: AdminPorts = {
    storage,
    clock,
    random,
    auditIds,
    hasher,
    keyPolicy,
    lifetimes: tokens,
    ...(policy.declaredProviders === undefined ? {} : { declaredProviders: policy.declaredProviders }),
    ...(policy.passwordPolicy === undefined ? {} : { passwordPolicy: policy.passwordPolicy }),
    ...(policy.loginThrottle === undefined ? {} : { loginThrottle: policy.loginThrottle }),
    ...(ports.lockSigningKeys === undefined ? {} : { lockSigningKeys: ports.lockSigningKeys }),
  };

  return {
    issuer,
    clock,
    random,
    auditIds,
    storage,
    providers,
    throttle,
    admin,
    trustKeys,

    token: (form, authorization, caller) => handleTokenRequest(form, authorization, tokenEndpoint, caller),
    reviewToken: (review, reviewer) =>
      reviewToken(
        review,
        {
          ...live,
          // A getter: a spread would read the key ring once, here.
          get keys() {
            return ports.keys();
          },
          clusterRequiresMfa: async (name) => (await storage.clusters.findByName(name))?.requireMfa === true,
        },
        reviewer,
      ),
    userinfo: (token) => userinfo(token, live),
    introspect: (token, hint) => introspectToken(token, hint, introspection),
    revoke: (token, hint, client, caller) =>
      revokeToken(token, hint, client, { ...revocation, keys: ports.keys() }, caller),
    checkAccessToken: (token) => checkAccessToken(token, live),
    verifyAccessToken: verify,
    authenticateClient: (presented) => authenticateClient(presented, findClient, new Date(clock.now())),
    async authenticateApiKey(presented, scope, denied) {
      const known = presented === undefined ? undefined : cache?.apiKey(presented);
      const live = known !== undefined && isApiKeyLive(known, new Date(clock.now())) ? known : undefined;
      // A live key that lacks the scope is refused after its event is stored.
      const record =
        live ??
        (await authenticateApiKey(
          presented,
          null,
          (prefix) => storage.apiKeys.findByPrefix(prefix),
          new Date(clock.now()),
        ));
      if (live === undefined) cache?.rememberApiKey(presented as string, record);
      if (scope === null || holdsScope(record.scopes, scope)) return record;
      if (denied !== undefined) {
        const { operation, ...origin } = denied();
        await auditBatcher.append(
          completeAuditEvents(
            [
              {
                type: 'api-key.denied',
                actor: { kind: 'api-key', id: record.id, name: record.prefix },
                outcome: 'failure',
                ...originFields(origin),
                details: { scope, operation },
              },
            ],
            clock,
            auditIds,
          ),
        );
      }
      throw lacksScope(scope);
    },
    metadata: (options) =>
      buildProviderMetadata({ issuer, grantTypes: TOKEN_ENDPOINT_GRANT_TYPES, ...options }),

    factors: {
      // The user's groups as tokens tell them (their linked identities' too).
      need: async (userId) => secondFactorNeed(userId, storage, (await users.findById(userId))?.groups ?? []),
      list: (userId) => listFactors(userId, storage),
      startTotp: (user, name) => startTotpEnrolment(user, name, factorContext),
      confirmTotp: (user, factorId, code, caller) =>
        confirmTotpEnrolment(user, factorId, code, caller, factorContext),
      verify: (user, code, firstMethods, caller) =>
        verifySecondFactor(
          user,
          code,
          firstMethods,
          { ...caller, address: caller.address ?? 'unknown' },
          factorContext,
        ),
      startPasskeyRegistration: (user, interactionId) =>
        startPasskeyRegistration(user, interactionId, webauthnContext),
      finishPasskeyRegistration: (user, interactionId, name, answer, caller) =>
        finishPasskeyRegistration(user, interactionId, name, answer, caller, webauthnContext),
      startPasskeyAssertion: (user, interactionId) =>
        startPasskeyAuthentication(user, interactionId, webauthnContext),
      verifyPasskey: (user, interactionId, answer, firstMethods, caller) =>
        verifyPasskeyAssertion(user, interactionId, answer, firstMethods, caller, webauthnContext),
      regenerateRecoveryCodes: (user, caller) => regenerateRecoveryCodes(user, caller, factorContext),
      remove: (user, factorId, actor, caller) => removeFactors(user, factorId, actor, caller, factorContext),
      require: (user, required, actor, caller) =>
        requireSecondFactor(user, required, actor, caller, factorContext),
    },

    signIn: {
      password: (request) => signInWithPassword(request, passwordSignIn),
      external: async (identity, provider, caller, forClient = null) => {
        const mapped = await signInWithExternalIdentity(
          identity,
          mappingPolicy(provider),
          caller.address ?? 'unknown',
          { ...mapping, throttle },
          caller,
          forClient,
        );
        if (!mapped.ok) return mapped;
        // Recorded once, here: the session (then its codes and device approvals) or the token
        // answer's grant carries it, so every grant of this sign-in re-checks the person upstream.
        const upstream = await grantUpstream(provider.config.name, identity, secret, new Date(clock.now()));
        return { ...mapped, upstream };
      },
      upstreamRefusal: (provider, reason, caller, forClient = null) =>
        recordUpstreamRefusal(provider, reason, mapping, caller, forClient),
    },
    federation: {
      issueTokens: (user, client, upstream, caller, amr = null) =>
        issueFederatedTokens(
          user,
          client,
          { ...tokenEndpoint, sourceAddress: caller.address, origin: caller, log: caller.log },
          upstream,
          amr,
        ),
    },
    authorize: {
      validate: async (params) => {
        const validated = await validateAuthorizationRequest(params, authorizationOptions);
        // A cluster that requires a second factor asks for one as acr_values=urn:idgate:acr:mfa
        // would, whatever the client sent: the grant covers the request's resources, or the
        // client's audiences when it names none.
        const { request, client } = validated;
        if (client.audiences.length > 0) {
          const covered = grantResources(request.resource ?? null, client);
          const mfaClusters = (await storage.clusters.list()).filter((cluster) => cluster.requireMfa);
          if (clustersNeedingMfa(mfaClusters, covered).length > 0) request.acrValues = [ACR.mfa];
        }
        // So does a client that requires one for every sign-in.
        if (client.requireMfa === true) request.acrValues = [ACR.mfa];
        return validated;
      },
      next: (request, client, authentication, options = {}) =>
        nextAuthorizationStep(
          request,
          client,
          authentication,
          options.consentGiven ? stepsAfterConsent : steps,
        ),
      issueCode: (request, authentication, origin) =>
        issueAuthorizationCode(request, authentication, {
          clock,
          random,
          auditIds,
          codes: storage.authorizationCodes,
          audit: { events: storage.auditEvents, origin },
        }),
      consent: (userId, clientId, given, origin) =>
        giveConsent(userId, clientId, given, {
          consents: storage.consents,
          clock,
          auditIds,
          audit: { events: storage.auditEvents, origin },
        }),
    },
    device: {
      start: (form, authorization) => startDeviceAuthorization(form, authorization, deviceStart),
      enterUserCode: (input, address, userAgent) => enterUserCode(input, address, device, userAgent),
      find: (deviceCodeHash) => findPendingDeviceAuthorization(deviceCodeHash, device),
      approve: (deviceCodeHash, approver) => approveDeviceAuthorization(deviceCodeHash, approver, device),
      deny: (deviceCodeHash, approver) => denyDeviceAuthorization(deviceCodeHash, approver, device),
    },
    logout: {
      validate: (params) =>
        validateLogoutRequest(params, { issuer, keys: ports.keys(), findClient, notBefore }),
      endSession: (sessionId, options) => endBrowserSession(sessionId, options, session),
    },
  };
}
