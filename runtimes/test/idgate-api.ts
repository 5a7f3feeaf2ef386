import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildProviderMetadata, generateSigningKey, KeyRing } from '@idgate/core';

/** The API key and the one token the canned API accepts. */
export const API_KEY = 'idg_runtime_key';
export const GOOD_TOKEN = 'good-token';

export interface CannedIdgate {
  baseUrl: string;
  close(): Promise<void>;
}

async function body(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The part of idgate's HTTP API the SDK program calls, on 127.0.0.1: the discovery document and
 * JWKS as core builds them, TokenReview answers for {@link GOOD_TOKEN} and any other token behind
 * {@link API_KEY}, under `/broken` a discovery document that is not one, and `files`.
 */
export async function startCannedIdgate(
  /** Files served as they are, by path (a page and its scripts, served from the API's origin). */
  files: Record<string, { type: string; body: string }> = {},
): Promise<CannedIdgate> {
  const secret = 'a-sealing-secret-for-the-runtime-tests-only';
  const key = await generateSigningKey('RS256', secret, new Date());
  const jwks = (await KeyRing.load([key], secret, new Date())).jwks();
  let baseUrl = '';
  const server: Server = createServer(async (request, response) => {
    const reply = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      response.end(JSON.stringify(payload));
    };
    const route = `${request.method} ${request.url}`;
    const file = request.method === 'GET' ? files[request.url ?? ''] : undefined;
    if (file !== undefined) {
      response.writeHead(200, { 'content-type': file.type });
      return response.end(file.body);
    }
    if (route === 'GET /oauth/.well-known/openid-configuration') {
      return reply(
        200,
        buildProviderMetadata({
          issuer: `${baseUrl}/oauth`,
          signingAlgorithms: ['RS256'],
          grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'],
          tokenEndpointAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
        }),
      );
    }
    if (route === 'GET /oauth/keys') return reply(200, jwks);
    if (route === 'GET /broken/oauth/.well-known/openid-configuration') return reply(200, { issuer: 42 });
    if (route === 'POST /oauth/authenticate') {
      if (request.headers.authorization !== `Bearer ${API_KEY}`) {
        return reply(
          401,
          { type: 'about:blank', title: 'Unauthorized', status: 401, code: 'unauthenticated' },
          { 'content-type': 'application/problem+json', 'www-authenticate': 'Bearer' },
        );
      }
      const review = JSON.parse(await body(request));
      const status =
        review.spec.token === GOOD_TOKEN
          ? {
              authenticated: true,
              user: { username: 'alice', uid: 'u-alice', groups: ['devs', 'ops'] },
              ...(review.spec.audiences === undefined ? {} : { audiences: review.spec.audiences }),
            }
          : { authenticated: false, error: 'token is malformed' };
      return reply(200, { apiVersion: review.apiVersion, kind: 'TokenReview', status });
    }
    reply(404, { error: 'not_found' });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
