// The HTTP stack's limit: fastify answering fixed bodies, verifying nothing. The bodies are the
// ones idgate itself answered (a successful TokenReview, its discovery document and JWKS), so
// both servers send the same bytes.
//
// Environment: BENCH_PORT, BENCH_FIXTURES (a JSON file: { tokenReview, discovery, jwks }, strings).
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const port = Number(process.env.BENCH_PORT);
const fixtures = JSON.parse(readFileSync(/** @type {string} */ (process.env.BENCH_FIXTURES), 'utf8'));
const JSON_TYPE = 'application/json; charset=utf-8';

const app = Fastify({ logger: false });

// The body is parsed (fastify's JSON parser is part of the stack) and ignored.
app.post('/oauth/authenticate', async (_request, reply) => reply.type(JSON_TYPE).send(fixtures.tokenReview));
app.get('/oauth/.well-known/openid-configuration', async (_request, reply) =>
  reply.type(JSON_TYPE).send(fixtures.discovery),
);
app.get('/oauth/keys', async (_request, reply) => reply.type(JSON_TYPE).send(fixtures.jwks));
app.get('/healthz', async () => ({ status: 'ok' }));

const stop = () => {
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

await app.listen({ host: '127.0.0.1', port });
