import * as z from 'zod/mini';
import { checked } from './checked.js';

/**
 * The parameters of an RP-initiated logout request (OIDC RP-Initiated Logout 1.0 §2), as the
 * logout endpoint takes them: a query string, or a form. A blank parameter counts as absent; none
 * may repeat.
 * @example LogoutRequestForm.parse({ id_token_hint: 'eyJ…', post_logout_redirect_uri: 'https://app.example/bye', state: 's' })
 */
export const LogoutRequestForm = /* @__PURE__ */ z.object({
  id_token_hint: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.describe('an ID token idgate issued: signs out without asking'),
    ),
  ),
  post_logout_redirect_uri: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.describe('registered for the client'),
    ),
  ),
  state: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  client_id: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
});
export type LogoutRequestForm = z.infer<typeof LogoutRequestForm>;
