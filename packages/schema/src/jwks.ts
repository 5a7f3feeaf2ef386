import * as z from 'zod/mini';
import { checked } from './checked.js';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

/**
 * A public JSON Web Key (RFC 7517 §4) as idgate publishes it. A key that carries private or
 * symmetric material (`d`, `p`, `q`, `dp`, `dq`, `qi`, `oth`, `k`) is rejected, so a client that
 * validates a JWKS with this schema never accepts a leaked private key.
 * @example PublicJwk.parse({ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid: 'k1', alg: 'EdDSA', use: 'sig' })
 */
export const PublicJwk = checked(
  z.looseObject({
    kty: z.enum(['RSA', 'EC', 'OKP']),
    kid: checked(z.string(), z.minLength(1)),
    use: z.optional(z.literal('sig')),
    alg: z.optional(z.string()),
    key_ops: z.optional(z.array(z.string())),
    n: z.optional(z.string()),
    e: z.optional(z.string()),
    crv: z.optional(z.string()),
    x: z.optional(z.string()),
    y: z.optional(z.string()),
  }),
  z.refine((jwk) => PRIVATE_MEMBERS.every((member) => !(member in jwk)), {
    message: 'a published JWK must not contain private key material',
  }),
);
export type PublicJwk = z.infer<typeof PublicJwk>;

/**
 * A JSON Web Key Set (RFC 7517 §5) of public signing keys.
 * @example Jwks.parse({ keys: [] })
 */
export const Jwks = z.object({ keys: z.array(PublicJwk) });
export type Jwks = z.infer<typeof Jwks>;
