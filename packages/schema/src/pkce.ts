import * as z from 'zod/mini';
import { checked } from './checked.js';

/**
 * RFC 7636 §4.1 and §4.2: a code_verifier, and so a code_challenge (its S256 hash in base64url,
 * or the verifier itself with `plain`), is 43 to 128 characters of
 * `[A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~"`.
 */
export const PKCE_VALUE_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/;

/**
 * A PKCE value of RFC 7636's form: a `code_verifier` (§4.1), or a `code_challenge` (§4.2), which
 * has the same form.
 * @example PkceValue.parse('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')
 */
export const PkceValue = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.regex(PKCE_VALUE_PATTERN, 'must be 43 to 128 characters of [A-Za-z0-9._~-]'),
);
export type PkceValue = z.infer<typeof PkceValue>;
