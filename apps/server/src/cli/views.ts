import {
  type ApiKeyRecord,
  type ClientRecord,
  type LinkedIdentityRecord,
  type LoginAttemptRecord,
  type SigningKeyRecord,
  signingKeyState,
  type UserRecord,
} from '@idgate/core';
import { ApiKey, LinkedIdentity, OAuthClient, SigningKeyInfo, User } from '@idgate/schema';

// What --json prints: the admin schemas' shapes, checked, so no hash or private field can slip out.

export function userView(user: UserRecord): User {
  return User.parse({
    id: user.id,
    username: user.username,
    email: user.email,
    displayName: user.displayName,
    groups: user.groups,
    disabled: user.disabled,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  });
}

export function clientView(client: ClientRecord): OAuthClient {
  return OAuthClient.parse({
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
    createdAt: client.createdAt.toISOString(),
  });
}

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

export function apiKeyView(key: ApiKeyRecord): ApiKey {
  return ApiKey.parse({
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    scopes: key.scopes,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
  });
}

export function signingKeyView(key: SigningKeyRecord, now: Date): SigningKeyInfo {
  return SigningKeyInfo.parse({
    kid: key.kid,
    alg: key.alg,
    state: signingKeyState(key, now),
    createdAt: key.createdAt.toISOString(),
    retiredAt: key.retiredAt?.toISOString() ?? null,
    publishedUntil: key.publishedUntil?.toISOString() ?? null,
  });
}

/** A login attempt as `idgate users logins --json` prints it (no admin schema covers it yet). */
export interface LoginAttemptView {
  id: string;
  username: string;
  userId: string | null;
  sourceAddress: string;
  provider: string;
  success: boolean;
  reason: string | null;
  createdAt: string;
}

export function loginAttemptView(attempt: LoginAttemptRecord): LoginAttemptView {
  return {
    id: attempt.id,
    username: attempt.username,
    userId: attempt.userId,
    sourceAddress: attempt.sourceAddress,
    provider: attempt.provider,
    success: attempt.success,
    reason: attempt.reason,
    createdAt: attempt.createdAt.toISOString(),
  };
}
