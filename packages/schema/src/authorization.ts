import * as z from 'zod/mini';
import { checked } from './checked.js';
import { PKCE_VALUE_PATTERN } from './pkce.js';

/**
 * The parameters of an authorization request (RFC 6749 §4.1.1, OIDC Core §3.1.2.1, RFC 7636
 * §4.3, RFC 8707 §2), as the authorization endpoint takes them: a query string, or a form. A
 * blank parameter counts as absent; only `resource` may repeat. A value the endpoint refuses
 * says why in the schema's message, the error description the client gets (`state is too long`).
 * What depends on the client — its redirect URIs, scopes and audiences, whether it must use
 * PKCE, whether `plain` is allowed — is checked against the client, not here.
 * @example AuthorizationRequestForm.parse({ response_type: 'code', client_id: 'app', redirect_uri: 'https://app.example/cb' })
 */
export const AuthorizationRequestForm = /* @__PURE__ */ z.object({
  response_type: /* @__PURE__ */ z.literal('code', { error: 'only response_type=code is supported' }),
  client_id: /* @__PURE__ */ z.string(),
  redirect_uri: /* @__PURE__ */ checked(
    /* @__PURE__ */ z.string(),
    /* @__PURE__ */ z.describe('exactly as registered (a loopback redirect of a public client: any port)'),
  ),
  scope: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.describe('space-separated; `openid` for an ID token'),
    ),
  ),
  state: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.maxLength(2048, 'state is too long'),
    ),
  ),
  nonce: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.maxLength(512, 'nonce is too long'),
    ),
  ),
  code_challenge: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.regex(
        PKCE_VALUE_PATTERN,
        'code_challenge must be 43 to 128 characters of [A-Za-z0-9._~-]',
      ),
      /* @__PURE__ */ z.describe('PKCE (RFC 7636); required of public clients'),
    ),
  ),
  code_challenge_method: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.enum(['S256', 'plain'], { error: 'code_challenge_method must be S256' }),
  ),
  response_mode: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.literal('query', { error: 'only response_mode=query is supported' }),
  ),
  prompt: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.describe('none, login, consent or select_account (OIDC Core §3.1.2.1)'),
    ),
  ),
  max_age: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.regex(/^[0-9]{1,9}$/, 'max_age must be a non-negative integer'),
    ),
  ),
  login_hint: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  acr_values: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.describe(
        'OIDC Core §3.1.2.1: space-separated acr values in order of preference; urn:idgate:acr:mfa asks for a second factor',
      ),
    ),
  ),
  resource: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.union([
        /* @__PURE__ */ z.string(),
        /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
      ]),
      /* @__PURE__ */ z.describe('RFC 8707: the audience of the tokens (a cluster); may repeat'),
    ),
  ),
});
export type AuthorizationRequestForm = z.infer<typeof AuthorizationRequestForm>;
