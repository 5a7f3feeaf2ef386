/**
 * `@idgate/sdk`: a typed HTTP client for the idgate identity service, for any JavaScript runtime.
 * @example
 * import { createIdgateClient, IdgateHttpError } from '@idgate/sdk';
 *
 * const idgate = createIdgateClient({ baseUrl: 'http://localhost:8080', apiKey: 'idg_…' });
 * try {
 *   const tokens = await idgate.passwordGrant({ clientId: 'kubectl', username: 'alice', password: 'pw' });
 *   const review = await idgate.reviewToken(tokens.access_token);
 * } catch (error) {
 *   if (error instanceof IdgateHttpError) console.error(error.status, error.oauthError?.error);
 * }
 * @packageDocumentation
 */

/** Wire types of `@idgate/schema` that the client's methods take and return (each documented there). */
export type {
  Jwks,
  OAuthError,
  Problem,
  ProviderMetadata,
  TokenRequest,
  TokenResponse,
  TokenReviewApiVersion,
  TokenReviewResponse,
} from '@idgate/schema';
export { createIdgateClient } from './client.js';
export type { SchemaIssue } from './errors.js';
export { IdgateError, IdgateHttpError, IdgateSchemaError } from './errors.js';
export type {
  ClientAuthentication,
  ClientAuthMethod,
  ClientCredentialsGrantOptions,
  IdgateClient,
  IdgateClientOptions,
  PasswordGrantOptions,
  ReviewTokenOptions,
} from './types.js';
