// Runs idgate's SDK on whatever runtime executes this file (Node, Bun, Deno, a browser) against the idgate
// HTTP API at the base URL given as the first argument: discovery, JWKS and TokenReview answers
// parsed and validated by @idgate/schema, and HTTP and schema failures as the SDK's typed errors.
// The test harness serves that API on 127.0.0.1 with the token `good-token` and the API key
// `idg_runtime_key`. Plain JavaScript importing the built packages, as a user would.
import { createIdgateClient, IdgateHttpError, IdgateSchemaError } from '@idgate/sdk';
import { check, runProgram } from './program.js';

// In a browser, the page's own origin (the harness serves the page and the API together).
const [baseUrl] = globalThis.Deno
  ? globalThis.Deno.args
  : globalThis.process?.argv
    ? globalThis.process.argv.slice(2)
    : [globalThis.location.origin];

async function refusal(promise) {
  return promise.then(
    () => undefined,
    (error) => error,
  );
}

async function main() {
  check(typeof baseUrl === 'string', 'the base URL is the first argument');
  const idgate = createIdgateClient({ baseUrl, apiKey: 'idg_runtime_key' });

  const metadata = await idgate.getProviderMetadata();
  check(metadata.issuer === `${baseUrl}/oauth`, 'the discovery document names the issuer');
  check(metadata.token_endpoint === `${baseUrl}/oauth/token`, 'and the token endpoint');
  const jwks = await idgate.getJwks();
  check(jwks.keys.length === 1 && jwks.keys[0]?.kty === 'RSA', 'the JWKS holds the RSA key');

  const review = await idgate.reviewToken('good-token', { audiences: ['kubernetes'] });
  check(review.status.authenticated === true, 'the good token is authenticated');
  check(review.status.user?.username === 'alice', 'as alice');
  check(review.status.user?.groups?.join() === 'devs,ops', 'with her groups');
  const refused = await idgate.reviewToken('bad-token');
  check(refused.status.authenticated === false && typeof refused.status.error === 'string', 'a bad token');

  const unknownKey = createIdgateClient({ baseUrl, apiKey: 'idg_wrong_key' });
  const unauthorized = await refusal(unknownKey.reviewToken('good-token'));
  check(unauthorized instanceof IdgateHttpError && unauthorized.status === 401, 'a wrong API key is a 401');
  check(!String(unauthorized.message).includes('good-token'), 'the error message keeps the token out');

  // A server whose discovery document is not one: the SDK refuses it rather than hand it on.
  const broken = createIdgateClient({ baseUrl: `${baseUrl}/broken` });
  const invalid = await refusal(broken.getProviderMetadata());
  check(invalid instanceof IdgateSchemaError, 'an invalid discovery document is a schema error');
}

await runProgram('sdk', main);
