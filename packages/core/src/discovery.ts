import type { GrantType, ProviderMetadata, SigningAlgorithm } from '@idgate/schema';
import { ACR_VALUES_SUPPORTED } from './factors/assurance.js';
import { USER_SCOPES } from './scopes.js';

/** The scopes idgate understands on behalf of users. */
export const SUPPORTED_SCOPES = USER_SCOPES;

/** The claims idgate can put into ID tokens and userinfo. */
export const SUPPORTED_CLAIMS = [
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'nonce',
  'azp',
  'sid',
  'at_hash',
  'acr',
  'amr',
  'name',
  'preferred_username',
  'updated_at',
  'email',
  'email_verified',
  'groups',
] as const;

/** What the discovery document must be true of. */
export interface DiscoveryOptions {
  /** `{base_url}/oauth`, without a trailing slash. */
  issuer: string;
  /** Algorithms of the keys that sign ID tokens (the key ring's). */
  signingAlgorithms: readonly SigningAlgorithm[];
  /** Grant types the token endpoint accepts. */
  grantTypes: readonly GrantType[];
  /** Scopes on offer; defaults to {@link SUPPORTED_SCOPES}. */
  scopes?: readonly string[];
  /** Client authentication methods the token endpoint accepts. */
  tokenEndpointAuthMethods: readonly string[];
  /** Optional endpoints, present only when the server serves them. */
  revocation?: boolean;
  introspection?: boolean;
  endSession?: boolean;
  /** RFC 8628: the device authorization endpoint, `{issuer}/device_authorization`. */
  deviceAuthorization?: boolean;
  /** Client authentication methods of the revocation and introspection endpoints. */
  endpointAuthMethods?: readonly string[];
  /** The languages the sign-in pages speak (`ui_locales_supported`), when they speak more than one. */
  uiLocales?: readonly string[];
}

/**
 * Builds the OpenID Provider Metadata (OIDC Discovery 1.0 §3) for an issuer: every endpoint is
 * under the issuer path, and every list says only what the server really supports.
 * @example
 * buildProviderMetadata({ issuer: 'https://id.example.com/oauth', signingAlgorithms: ['RS256'], grantTypes: ['client_credentials'], tokenEndpointAuthMethods: ['client_secret_basic'] });
 */
export function buildProviderMetadata(options: DiscoveryOptions): ProviderMetadata {
  const issuer = options.issuer.replace(/\/+$/, '');
  const metadata: ProviderMetadata = {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    userinfo_endpoint: `${issuer}/userinfo`,
    jwks_uri: `${issuer}/keys`,
    scopes_supported: [...(options.scopes ?? SUPPORTED_SCOPES)],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...options.grantTypes],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [...options.signingAlgorithms],
    token_endpoint_auth_methods_supported: [...options.tokenEndpointAuthMethods],
    claims_supported: [...SUPPORTED_CLAIMS],
    claim_types_supported: ['normal'],
    acr_values_supported: [...ACR_VALUES_SUPPORTED],
    code_challenge_methods_supported: ['S256'],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  };
  const endpointAuthMethods = [...(options.endpointAuthMethods ?? options.tokenEndpointAuthMethods)];
  if (options.revocation) {
    metadata.revocation_endpoint = `${issuer}/revoke`;
    metadata.revocation_endpoint_auth_methods_supported = endpointAuthMethods;
  }
  if (options.introspection) {
    metadata.introspection_endpoint = `${issuer}/introspect`;
    metadata.introspection_endpoint_auth_methods_supported = endpointAuthMethods.filter((m) => m !== 'none');
  }
  if (options.endSession) metadata.end_session_endpoint = `${issuer}/logout`;
  if (options.deviceAuthorization) metadata.device_authorization_endpoint = `${issuer}/device_authorization`;
  if (options.uiLocales !== undefined && options.uiLocales.length > 0)
    metadata.ui_locales_supported = [...options.uiLocales];
  // RFC 9207: every authorization response carries `iss`.
  metadata.authorization_response_iss_parameter_supported = true;
  return metadata;
}
