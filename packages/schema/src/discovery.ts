import * as z from 'zod/mini';
import { checked } from './checked.js';

const Url = /* @__PURE__ */ z.url({ protocol: /^https?$/ });
const NonEmptyStrings = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.array(
    /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
  ),
  /* @__PURE__ */ z.minLength(1),
);

/**
 * OpenID Provider Metadata (OIDC Discovery 1.0 §3, RFC 8414 §2). The thirteen fields idgate always
 * serves are required; other registered fields are optional and unknown fields are kept.
 * @example
 * ProviderMetadata.parse({
 *   issuer: 'https://id.example.com/oauth',
 *   authorization_endpoint: 'https://id.example.com/oauth/authorize',
 *   token_endpoint: 'https://id.example.com/oauth/token',
 *   userinfo_endpoint: 'https://id.example.com/oauth/userinfo',
 *   jwks_uri: 'https://id.example.com/oauth/keys',
 *   scopes_supported: ['openid'],
 *   response_types_supported: ['code'],
 *   grant_types_supported: ['authorization_code'],
 *   subject_types_supported: ['public'],
 *   id_token_signing_alg_values_supported: ['RS256'],
 *   token_endpoint_auth_methods_supported: ['client_secret_basic'],
 *   claims_supported: ['sub'],
 *   code_challenge_methods_supported: ['S256'],
 * });
 */
export const ProviderMetadata = /* @__PURE__ */ z.looseObject({
  issuer: Url,
  authorization_endpoint: Url,
  token_endpoint: Url,
  userinfo_endpoint: Url,
  jwks_uri: Url,
  scopes_supported: NonEmptyStrings,
  response_types_supported: NonEmptyStrings,
  grant_types_supported: NonEmptyStrings,
  subject_types_supported: NonEmptyStrings,
  id_token_signing_alg_values_supported: NonEmptyStrings,
  token_endpoint_auth_methods_supported: NonEmptyStrings,
  claims_supported: NonEmptyStrings,
  code_challenge_methods_supported: NonEmptyStrings,
  revocation_endpoint: /* @__PURE__ */ z.optional(Url),
  introspection_endpoint: /* @__PURE__ */ z.optional(Url),
  end_session_endpoint: /* @__PURE__ */ z.optional(Url),
  device_authorization_endpoint: /* @__PURE__ */ z.optional(Url),
  registration_endpoint: /* @__PURE__ */ z.optional(Url),
  service_documentation: /* @__PURE__ */ z.optional(Url),
  response_modes_supported: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.array(/* @__PURE__ */ z.string())),
  token_endpoint_auth_signing_alg_values_supported: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  ),
  revocation_endpoint_auth_methods_supported: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  ),
  introspection_endpoint_auth_methods_supported: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  ),
  userinfo_signing_alg_values_supported: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  ),
  acr_values_supported: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.array(/* @__PURE__ */ z.string())),
  claim_types_supported: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.array(/* @__PURE__ */ z.string())),
  ui_locales_supported: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.array(/* @__PURE__ */ z.string())),
  claims_parameter_supported: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
  request_parameter_supported: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
  request_uri_parameter_supported: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
  require_request_uri_registration: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
  authorization_response_iss_parameter_supported: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
});
export type ProviderMetadata = z.infer<typeof ProviderMetadata>;
