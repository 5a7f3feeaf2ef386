import * as z from 'zod/mini';
import { checked } from './checked.js';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

/**
 * A public JSON Web Key (RFC 7517 §4) as idgate publishes it. A key that carries private or
 * symmetric material (`d`, `p`, `q`, `dp`, `dq`, `qi`, `oth`, `k`) is rejected, so a client that
 * validates a JWKS with this schema never accepts a leaked private key.
 * @example PublicJwk.parse({ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid: 'k1', alg: 'EdDSA', use: 'sig' })
 */
export const PublicJwk = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.looseObject({
    kty: /* @__PURE__ */ z.enum(['RSA', 'EC', 'OKP']),
    kid: /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
    use: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.literal('sig')),
    alg: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
    key_ops: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.array(/* @__PURE__ */ z.string())),
    n: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
    e: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
    crv: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
    x: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
    y: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  }),
  /* @__PURE__ */ z.refine((jwk) => PRIVATE_MEMBERS.every((member) => !(member in jwk)), {
    message: 'a published JWK must not contain private key material',
  }),
);
export type PublicJwk = z.infer<typeof PublicJwk>;

/**
 * A JSON Web Key Set (RFC 7517 §5) of public signing keys.
 * @example Jwks.parse({ keys: [] })
 */
export const Jwks = /* @__PURE__ */ z.object({ keys: /* @__PURE__ */ z.array(PublicJwk) });
export type Jwks = z.infer<typeof Jwks>;
