/**
 * `@idgate/core/admin`: the administrative use cases — users, groups, identities, clients, API
 * keys, signing keys, identity providers, clusters, sessions and grants, the audit trail's
 * listing and live tail, and initializing an empty storage — each one function over
 * {@link AdminPorts}, refusing with an {@link AdminError}; and the views that show their objects
 * as the admin API answers them. The idgate server's admin API and its CLI call these; a host that
 * only runs idgate's flows needs the main entry alone.
 * @example
 * import { createUser, userView } from '@idgate/core/admin';
 * const { user, generatedPassword } = await createUser(ports, CreateUserInput.parse({ username: 'alice' }));
 * console.log(userView(user), generatedPassword);
 */
export {
  createApiKey,
  createApiKeyFromInput,
  getApiKey,
  listApiKeyPage,
  listApiKeys,
  revokeApiKey,
  updateApiKey,
} from './admin/api-keys.js';
export {
  type AuditEventFilter,
  auditEventFilter,
  listAuditEvents,
  parseAuditEventQuery,
  verifyAuditTrail,
} from './admin/audit-events.js';
export {
  endClientSessions,
  listClientGrants,
  listClientSessions,
  revokeAllClientGrants,
  revokeClientGrant,
} from './admin/client-sessions.js';
export {
  type ClientSettings,
  createClient,
  DEFAULT_CLIENT_SCOPES,
  getClient,
  listClientPage,
  listClients,
  parseClientRegistration,
  registerClient,
  removeClient,
  rotateClientSecret,
  updateClient,
} from './admin/clients.js';
export {
  addCluster,
  getCluster,
  issueClusterApiKey,
  listClusters,
  removeCluster,
  updateCluster,
} from './admin/clusters.js';
export {
  type ApplyOptions,
  applyDeclarations,
  type DeclarationPorts,
  type SecretReader,
} from './admin/declarations.js';
export {
  AdminError,
  type AdminErrorCode,
  type AdminObject,
  type InputSchema,
  isAdminError,
  parseAdminInput,
} from './admin/errors.js';
export { listUserFactors, removeUserFactor, resetUserFactors, setMfaRequired } from './admin/factors.js';
export {
  addGroupMember,
  createGroup,
  deleteGroup,
  getGroup,
  groupView,
  listGroupMembers,
  listGroups,
  removeGroupMember,
  updateGroup,
} from './admin/groups.js';
export { linkIdentity, listUserIdentities, unlinkIdentity } from './admin/identities.js';
export {
  addIdentityProvider,
  getIdentityProvider,
  listIdentityProviders,
  refuseProviderPatch,
  refuseTakenProviderName,
  removeIdentityProvider,
  setIdentityProviderDisabled,
  updateIdentityProvider,
} from './admin/identity-providers.js';
export {
  liftAddressBlocks,
  listBlockedAddresses,
  listNotBefore,
  NOT_BEFORE_CLOCK_SKEW_SECONDS,
  retireSigningKey,
  setNotBefore,
} from './admin/incident.js';
export { ADMIN_GROUP, type Initialized, initializeStorage } from './admin/init.js';
export type { AdminPorts, ClientLifetimes } from './admin/ports.js';
export {
  type IdentityProviderSource,
  openProviderConfig,
  sealProviderConfig,
} from './admin/provider-config.js';
export {
  type AdminPage,
  endAllUserSessions,
  endUserSession,
  listUserGrants,
  listUserSessions,
  revokeAllUserGrants,
  revokeUserGrant,
} from './admin/sessions.js';
export { listSigningKeys, rotateSigningKeys } from './admin/signing-keys.js';
export {
  addTrust,
  getTrust,
  listTrusts,
  removeTrust,
  testTrust,
  trustView,
  updateTrust,
} from './admin/trusts.js';
export {
  createUser,
  type DisabledUserAccess,
  deleteUser,
  getUser,
  LOGIN_ATTEMPTS_LIMIT,
  listLoginAttempts,
  listUserPage,
  setUserDisabled,
  setUserPassword,
  unlockUser,
  updateUser,
} from './admin/users.js';
export { apiKeyView, clientView, linkedIdentityView, loginAttemptView, userView } from './admin/views.js';
export { isApiKeyLive } from './api-keys/api-key.js';
export { auditEventTime, type FollowOptions, followAuditEvents } from './audit/follow.js';
export {
  type AuthenticationConfiguration,
  type CelRule,
  clusterAuthenticationConfiguration,
  KUBERNETES_JWT_ALGORITHMS,
  mfaClaimRule,
  type WebhookKubeconfig,
  webhookKubeconfig,
} from './clusters/kubernetes.js';
