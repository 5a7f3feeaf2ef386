import * as z from 'zod/mini';
import { checked } from './checked.js';

const State = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.minLength(1),
  /* @__PURE__ */ z.maxLength(512),
);

/** A decimal integer as a query string carries it: digits only, never `''`, `' '`, `'0x10'` or `'1e3'`. */
const QueryInt = /* @__PURE__ */ z.union([
  /* @__PURE__ */ z.number(),
  /* @__PURE__ */ z.pipe(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.regex(/^[0-9]+$/, 'must be a decimal integer'),
    ),
    /* @__PURE__ */ z.transform(Number),
  ),
]);

/**
 * Callback query, token form: the upstream sends an access token straight to the callback.
 * `token_type` is case-insensitive (RFC 6749 §7.1) and normalized to lower case here;
 * `expires_in` arrives as a decimal string and is parsed to an integer.
 * @example CallbackTokenQuery.parse({ access_token: 'gho_x', token_type: 'Bearer', expires_in: '3600', state: 's' })
 */
export const CallbackTokenQuery = /* @__PURE__ */ z.object({
  access_token: /* @__PURE__ */ checked(
    /* @__PURE__ */ z.string(),
    /* @__PURE__ */ z.minLength(1),
    /* @__PURE__ */ z.maxLength(8192),
  ),
  token_type: /* @__PURE__ */ z.pipe(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(64),
    ),
    /* @__PURE__ */ z.transform((t) => t.toLowerCase()),
  ),
  expires_in: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.pipe(
      QueryInt,
      /* @__PURE__ */ checked(
        /* @__PURE__ */ z.int(),
        /* @__PURE__ */ z.nonnegative(),
        /* @__PURE__ */ z.lte(2_147_483_647),
      ),
    ),
  ),
  scope: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.maxLength(2048)),
  ),
  state: State,
});
export type CallbackTokenQuery = z.infer<typeof CallbackTokenQuery>;

/**
 * Callback query, authorization-code form (RFC 6749 §4.1.2), with RFC 9207 `iss` when sent.
 * @example CallbackCodeQuery.parse({ code: 'abc', state: 's' })
 */
export const CallbackCodeQuery = /* @__PURE__ */ z.object({
  code: /* @__PURE__ */ checked(
    /* @__PURE__ */ z.string(),
    /* @__PURE__ */ z.minLength(1),
    /* @__PURE__ */ z.maxLength(2048),
  ),
  state: State,
  iss: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.maxLength(2048)),
  ),
});
export type CallbackCodeQuery = z.infer<typeof CallbackCodeQuery>;

/**
 * Callback query, error form (RFC 6749 §4.1.2.1).
 * @example CallbackErrorQuery.parse({ error: 'access_denied', state: 's' })
 */
export const CallbackErrorQuery = /* @__PURE__ */ z.object({
  error: /* @__PURE__ */ checked(
    /* @__PURE__ */ z.string(),
    /* @__PURE__ */ z.minLength(1),
    /* @__PURE__ */ z.maxLength(256),
  ),
  error_description: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.maxLength(2048)),
  ),
  error_uri: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.maxLength(2048)),
  ),
  state: /* @__PURE__ */ z.optional(State),
});
export type CallbackErrorQuery = z.infer<typeof CallbackErrorQuery>;

/**
 * Any query `GET /oauth/callback/{callback}` accepts: an error wins, then the code form, then the
 * token form.
 * @example CallbackQuery.parse({ code: 'abc', state: 's' })
 */
export const CallbackQuery = /* @__PURE__ */ z.union([
  CallbackErrorQuery,
  CallbackCodeQuery,
  CallbackTokenQuery,
]);
export type CallbackQuery = z.infer<typeof CallbackQuery>;
