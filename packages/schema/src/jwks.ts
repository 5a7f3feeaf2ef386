import { z } from 'zod';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

/**
 * A public JSON Web Key (RFC 7517 §4) as idgate publishes it. A key that carries private or
 * symmetric material (`d`, `p`, `q`, `dp`, `dq`, `qi`, `oth`, `k`) is rejected, so a client that
 * validates a JWKS with this schema never accepts a leaked private key.
 * @example PublicJwk.parse({ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid: 'k1', alg: 'EdDSA', use: 'sig' })
 */
export const PublicJwk = z
  .looseObject({
    kty: z.enum(['RSA', 'EC', 'OKP']),
    kid: z.string().min(1),
    use: z.literal('sig').optional(),
    alg: z.string().optional(),
    key_ops: z.array(z.string()).optional(),
    n: z.string().optional(),
    e: z.string().optional(),
    crv: z.string().optional(),
    x: z.string().optional(),
    y: z.string().optional(),
  })
  .refine((jwk) => PRIVATE_MEMBERS.every((member) => !(member in jwk)), {
    message: 'a published JWK must not contain private key material',
  });
export type PublicJwk = z.infer<typeof PublicJwk>;

/**
 * A JSON Web Key Set (RFC 7517 §5) of public signing keys.
 * @example Jwks.parse({ keys: [] })
 */
export const Jwks = z.object({ keys: z.array(PublicJwk) });
export type Jwks = z.infer<typeof Jwks>;
