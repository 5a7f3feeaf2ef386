import {
  ApiKey,
  Cluster,
  GrantInfo,
  LinkedIdentity,
  LoginAttempt,
  OAuthClient,
  SessionInfo,
  SigningKeyInfo,
  User,
} from '@idgate/schema';
import { type SigningKeyPhase, signingKeyState } from '../keys/signing-key.js';
import type {
  ApiKeyRecord,
  BrowserSessionRecord,
  ClientRecord,
  ClusterRecord,
  GrantRecord,
  LinkedIdentityRecord,
  LoginAttemptRecord,
  SigningKeyRecord,
  UserRecord,
} from '../model.js';
import { etagOf } from './etag.js';

// Records as the admin API and `--json` show them: the admin schemas' shapes, checked, so that no
// hash, sealed key or other private field can slip out.

/** @example userView(user) // { id, username, email, displayName, groups, disabled, createdAt, updatedAt, etag } */
export function userView(user: UserRecord): User {
  const fields = {
    id: user.id,
    username: user.username,
    email: user.email,
    displayName: user.displayName,
    groups: user.groups,
    disabled: user.disabled,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
  return User.parse({ ...fields, etag: etagOf(fields) });
}

/** A client without its secret hashes, with its `etag`. @example clientView(client).grantTypes */
export function clientView(client: ClientRecord): OAuthClient {
  const fields = {
    clientId: client.clientId,
    name: client.name,
    public: client.public,
    trusted: client.trusted,
    redirectUris: client.redirectUris,
    postLogoutRedirectUris: client.postLogoutRedirectUris,
    grantTypes: client.grantTypes,
    scopes: client.scopes,
    audiences: client.audiences,
    accessTokenTtl: client.accessTokenTtl,
    refreshTokenTtl: client.refreshTokenTtl,
    previousSecretExpiresAt: client.previousSecretExpiresAt?.toISOString() ?? null,
    createdAt: client.createdAt.toISOString(),
  };
  const requireMfa = client.requireMfa === true;
  // The etag covers `requireMfa` only when set: a client saved before the setting keeps its etag.
  const versioned = requireMfa ? { ...fields, requireMfa } : fields;
  return OAuthClient.parse({ ...fields, requireMfa, etag: etagOf(versioned) });
}

/** @example linkedIdentityView(identity).lastLoginAt // null until the first sign-in */
export function linkedIdentityView(identity: LinkedIdentityRecord): LinkedIdentity {
  return LinkedIdentity.parse({
    provider: identity.provider,
    subject: identity.subject,
    userId: identity.userId,
    username: identity.username,
    email: identity.email,
    groups: identity.groups,
    linkedAt: identity.linkedAt.toISOString(),
    lastLoginAt: identity.lastLoginAt?.toISOString() ?? null,
  });
}

/** An API key by its prefix, without its hash. @example apiKeyView(record).prefix */
export function apiKeyView(key: ApiKeyRecord): ApiKey {
  return ApiKey.parse({
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    scopes: key.scopes,
    cluster: key.cluster?.name ?? null,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    expiresAt: key.expiresAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
  });
}

/** A signing key and its state at `now`, without private material. @example signingKeyView(record, new Date()).state */
export function signingKeyView(
  key: SigningKeyRecord,
  now: Date,
  phase: SigningKeyPhase = signingKeyState(key, now),
): SigningKeyInfo {
  return SigningKeyInfo.parse({
    kid: key.kid,
    alg: key.alg,
    state: phase,
    createdAt: key.createdAt.toISOString(),
    retiredAt: key.retiredAt?.toISOString() ?? null,
    publishedUntil: key.publishedUntil?.toISOString() ?? null,
  });
}

/** @example loginAttemptView(attempt).success */
export function loginAttemptView(attempt: LoginAttemptRecord): LoginAttempt {
  return LoginAttempt.parse({
    id: attempt.id,
    username: attempt.username,
    userId: attempt.userId,
    sourceAddress: attempt.sourceAddress,
    provider: attempt.provider,
    success: attempt.success,
    reason: attempt.reason,
    createdAt: attempt.createdAt.toISOString(),
  });
}

/** A cluster with the id of the kubectl client (null when there is none). @example clusterView(record, 'cl_abc').audience */
export function clusterView(cluster: ClusterRecord, kubectlClientId: string | null): Cluster {
  return Cluster.parse({
    name: cluster.name,
    audience: cluster.audience,
    requireMfa: cluster.requireMfa,
    kubectlClientId,
    createdAt: cluster.createdAt.toISOString(),
  });
}

/**
 * A browser session without its secret hash, with when it was last seen and the applications it
 * signed in to. @example sessionInfoView(session, lastSeenAt, [{ clientId: 'cl_web', name: 'Web' }])
 */
export function sessionInfoView(
  session: BrowserSessionRecord,
  lastSeenAt: Date,
  clients: { clientId: string; name: string | null }[],
): SessionInfo {
  return SessionInfo.parse({
    id: session.id,
    createdAt: session.createdAt.toISOString(),
    lastSeenAt: lastSeenAt.toISOString(),
    expiresAt: session.expiresAt.toISOString(),
    sourceAddress: session.sourceAddress ?? null,
    userAgent: session.userAgent ?? null,
    clients,
  });
}

/** A grant with its client's name (null when the client is gone). @example grantInfoView(grant, 'Web').lastUsedAt */
export function grantInfoView(grant: GrantRecord, clientName: string | null): GrantInfo {
  return GrantInfo.parse({
    id: grant.id,
    clientId: grant.clientId,
    clientName,
    scopes: grant.scope,
    sessionId: grant.sessionId,
    createdAt: grant.createdAt.toISOString(),
    lastUsedAt: grant.lastUsedAt?.toISOString() ?? null,
    lastUsedAddress: grant.lastUsedAddress ?? null,
    expiresAt: grant.expiresAt.toISOString(),
    resources: grant.resources ?? null,
  });
}
