export {
  ApiKeyError,
  type ApiKeyFailure,
  apiKeyFromAuthorization,
  authenticateApiKey,
  type GeneratedApiKey,
  generateApiKey,
} from './api-keys/api-key.js';
export {
  authenticateClient,
  type ClientAuthMethod,
  type PresentedClientCredentials,
} from './clients/authenticate.js';
export {
  buildProviderMetadata,
  type DiscoveryOptions,
  SUPPORTED_CLAIMS,
  SUPPORTED_SCOPES,
} from './discovery.js';
export { IdgateError, type IdgateErrorOptions, isIdgateError } from './errors.js';
export { clientCredentialsGrant } from './grants/client-credentials.js';
export type { TokenEndpointContext } from './grants/context.js';
export { type FormFields, parseTokenRequest } from './grants/parse.js';
export { passwordGrant } from './grants/password.js';
export { handleTokenRequest, TOKEN_ENDPOINT_GRANT_TYPES } from './grants/token-endpoint.js';
export { type ActiveSigningKey, KeyRing, type VerificationKey } from './keys/key-ring.js';
export { ensureSigningKey, rotateSigningKey, type SigningKeyPolicy } from './keys/rotation.js';
export { openPrivateKey, sealPrivateKey } from './keys/seal.js';
export {
  generateSigningKey,
  SIGNING_ALGORITHMS,
  type SigningKeyState,
  signingKeyState,
} from './keys/signing-key.js';
export type {
  ApiKeyRecord,
  ClientRecord,
  NewUser,
  RevocationKind,
  RevocationRecord,
  SigningKeyRecord,
  UserPatch,
  UserRecord,
} from './model.js';
export { createMemoryStorage, insecureTestPasswordHasher } from './ports/memory.js';
export { type Clock, type PasswordHasher, systemClock } from './ports/runtime.js';
export {
  type ApiKeyRepository,
  type ClientRepository,
  type RevocationRepository,
  type SigningKeyRepository,
  type Storage,
  StorageConflictError,
  type UserRepository,
} from './ports/storage.js';
export { grantedScope, parseScope, tokenAudience } from './scopes.js';
export { generateSecret, hashSecret, verifySecret } from './secrets.js';
export {
  reviewToken,
  SERVICE_IDENTITY,
  TOKEN_REVIEW_EXTRA,
  type TokenReviewContext,
} from './token-review/review.js';
export {
  ACCESS_TOKEN_REJECTION_MESSAGES,
  type AccessTokenInput,
  type AccessTokenRejection,
  type AccessTokenVerification,
  type IssuedAccessToken,
  issueAccessToken,
  MAX_ACCESS_TOKEN_LENGTH,
  verifyAccessToken,
} from './tokens/access-token.js';
export { accessTokenHash, type IdTokenInput, issueIdToken } from './tokens/id-token.js';
export { userClaims } from './tokens/user-claims.js';
export {
  type PasswordLoginContext,
  type PasswordLoginFailure,
  verifyUserPassword,
} from './users/authenticate.js';
