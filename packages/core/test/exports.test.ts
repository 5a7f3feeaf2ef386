import { describe, expect, it } from 'vitest';
import * as admin from '../src/admin.js';
import * as core from '../src/index.js';
import * as testing from '../src/testing.js';

describe('public surface of @idgate/core', () => {
  it('keeps in-memory ports and the weak test hasher out of the main entry point', () => {
    expect(Object.keys(core)).not.toContain('createMemoryStorage');
    expect(Object.keys(core)).not.toContain('insecureTestPasswordHasher');
  });

  it('offers the instance, not the pieces it is built from: endpoints and grants are reached through createIdgate', () => {
    expect(typeof core.createIdgate).toBe('function');
    for (const internal of [
      'handleTokenRequest',
      'passwordGrant',
      'refreshTokenGrant',
      'reviewToken',
      'userinfo',
      'introspectToken',
      'signInWithPassword',
      'issueAccessToken',
      'randomBytes',
      'auditEventId',
    ]) {
      expect(Object.keys(core)).not.toContain(internal);
    }
  });

  it('offers them under @idgate/core/testing, with the records the storage contract stores', () => {
    expect(Object.keys(testing).sort()).toEqual([
      'at',
      'createMemoryStorage',
      'insecureTestPasswordHasher',
      'newApiKey',
      'newClient',
      'newCode',
      'newDevice',
      'newGrant',
      'newIdentityProvider',
      'newInteraction',
      'newLinkedIdentity',
      'newLoginAttempt',
      'newLoginTransaction',
      'newRefreshToken',
      'newSession',
      'newSigningKey',
      'newUpstream',
      'newUser',
      'seededRandom',
    ]);
  });

  it('offers what a host runs idgate with: the instance, its ports, errors, keys and JWS, connectors, audit writers', () => {
    expect(Object.keys(core).sort()).toEqual([
      'ApiKeyError',
      'AuthorizationError',
      'ConnectorError',
      'DEFAULT_LOGIN_THROTTLE',
      'DEFAULT_PASSWORD_POLICY',
      'DEFAULT_REVALIDATE_MAX_STALENESS',
      'IdgateError',
      'KeyRing',
      'OAuthProtocolError',
      'SERVICE_IDENTITY',
      'StorageConflictError',
      'StorageUnavailableError',
      'TOKEN_REVIEW_DENIAL_MESSAGES',
      'TOKEN_REVIEW_EXTRA',
      'TokenReviewTally',
      'apiKeyFromAuthorization',
      'apiKeyScopes',
      'authenticateApiKey',
      'authorizationErrorUrl',
      'authorizationResponseUrl',
      'buildProviderMetadata',
      'completeAuditEvents',
      'computeCodeChallenge',
      'constantTimeEqual',
      'createAuditEventIds',
      'createGitHubConnector',
      'createGitLabConnector',
      'createIdgate',
      'createOidcConnector',
      'ensureSigningKey',
      'formatUserCode',
      'generateSecret',
      'generateSigningKey',
      'hashSecret',
      'holdsScope',
      'isDeviceApproval',
      'isIdgateError',
      'isStandalone',
      'openPrivateKey',
      'openText',
      'originFields',
      'pooledRandom',
      'purgeAuditEvents',
      'purgeExpiredRecords',
      'recordAuditEvent',
      'rotateSigningKey',
      'signCompactJws',
      'signInWithExternalIdentity',
      'startDeviceAuthorization',
      'systemClock',
      'verifyCompactJws',
      'verifySecret',
      'webCryptoJws',
      'webCryptoRandom',
    ]);
  });

  it('offers the administrative use cases, their errors and views under @idgate/core/admin, and only there', () => {
    expect(Object.keys(admin).sort()).toEqual([
      'ADMIN_GROUP',
      'AdminError',
      'DEFAULT_CLIENT_SCOPES',
      'KUBERNETES_JWT_ALGORITHMS',
      'LOGIN_ATTEMPTS_LIMIT',
      'addCluster',
      'addGroupMember',
      'addIdentityProvider',
      'apiKeyView',
      'auditEventFilter',
      'clientView',
      'clusterAuthenticationConfiguration',
      'createApiKey',
      'createApiKeyFromInput',
      'createClient',
      'createUser',
      'deleteUser',
      'endAllUserSessions',
      'endUserSession',
      'followAuditEvents',
      'getApiKey',
      'getClient',
      'getCluster',
      'getIdentityProvider',
      'getUser',
      'initializeStorage',
      'isAdminError',
      'isApiKeyLive',
      'issueClusterApiKey',
      'linkIdentity',
      'linkedIdentityView',
      'listApiKeyPage',
      'listApiKeys',
      'listAuditEvents',
      'listClientPage',
      'listClients',
      'listClusters',
      'listGroupMembers',
      'listGroups',
      'listIdentityProviders',
      'listLoginAttempts',
      'listSigningKeys',
      'listUserGrants',
      'listUserIdentities',
      'listUserPage',
      'listUserSessions',
      'loginAttemptView',
      'openProviderConfig',
      'parseAdminInput',
      'parseAuditEventQuery',
      'parseClientRegistration',
      'refuseProviderPatch',
      'refuseTakenProviderName',
      'registerClient',
      'removeClient',
      'removeCluster',
      'removeGroupMember',
      'removeIdentityProvider',
      'revokeAllUserGrants',
      'revokeApiKey',
      'revokeUserGrant',
      'rotateClientSecret',
      'rotateSigningKeys',
      'sealProviderConfig',
      'setIdentityProviderDisabled',
      'setUserDisabled',
      'setUserPassword',
      'unlinkIdentity',
      'unlockUser',
      'updateApiKey',
      'updateClient',
      'updateIdentityProvider',
      'updateUser',
      'userView',
      'verifyAuditTrail',
      'webhookKubeconfig',
    ]);
    expect(Object.keys(core).filter((name) => name in admin)).toEqual([]);
  });

  it('gives key objects no key material: only the kid, the algorithm and the operation', async () => {
    const { keyRing } = await import('./helpers.js');
    const ring = await keyRing('ES256');
    expect(Object.keys(ring.signer).sort()).toEqual(['alg', 'kid', 'sign']);
    expect(Object.keys(ring.verificationKey(ring.signer.kid) ?? {}).sort()).toEqual(['alg', 'kid', 'verify']);
  });
});
