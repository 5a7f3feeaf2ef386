// The reference OpenID provider: node-oidc-provider with its default (memory) adapter, one
// confidential client allowed client_credentials, introspection enabled. Run with
// NODE_ENV=production. With BENCH_ACCESS_TOKEN_FORMAT=jwt, resource indicators are enabled and
// every access token is for the resource BENCH_RESOURCE, as a JWT signed with BENCH_ALG: then it
// signs on the token endpoint as idgate does. Otherwise its access tokens are opaque.
//
// Environment: BENCH_PORT, BENCH_ALG (RS256, ES256 or EdDSA: the signing key it gets),
// BENCH_CLIENT_ID, BENCH_CLIENT_SECRET, BENCH_ACCESS_TOKEN_FORMAT (opaque or jwt), BENCH_RESOURCE.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const port = Number(process.env.BENCH_PORT);
const alg = process.env.BENCH_ALG ?? 'RS256';
const jwt = process.env.BENCH_ACCESS_TOKEN_FORMAT === 'jwt';
const resource = process.env.BENCH_RESOURCE ?? 'urn:idgate:bench';

/** @returns {import('node:crypto').JsonWebKey} */
function signingKey() {
  const pair =
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : alg === 'EdDSA'
        ? generateKeyPairSync('ed25519')
        : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...pair.privateKey.export({ format: 'jwk' }), alg, use: 'sig', kid: 'bench' };
}

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: /** @type {string} */ (process.env.BENCH_CLIENT_ID),
      client_secret: /** @type {string} */ (process.env.BENCH_CLIENT_SECRET),
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: alg,
    },
  ],
  jwks: { keys: [signingKey()] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true, allowedPolicy: async () => true },
    ...(jwt
      ? {
          resourceIndicators: {
            enabled: true,
            defaultResource: async () => resource,
            useGrantedResource: async () => true,
            getResourceServerInfo: async () => ({
              scope: '',
              audience: resource,
              accessTokenTTL: 3600,
              accessTokenFormat: 'jwt',
              jwt: { sign: { alg } },
            }),
          },
        }
      : {}),
  },
  ttl: { ClientCredentials: 3600, AccessToken: 3600 },
  findAccount: async () => undefined,
});

const server = createServer(provider.callback());
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
server.listen(port, '127.0.0.1');
