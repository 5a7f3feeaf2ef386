import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';

/**
 * A stand-in for a Kubernetes API server on loopback over HTTPS (a throwaway certificate made with
 * the openssl CLI): `GET /api` answers only a request whose bearer token is a JWT of `issuer` for
 * `audience`, verified against the issuer's JWKS (fetched once, at start), as the API server's JWT
 * authenticator does; anything else is 401 like Kubernetes answers it.
 */
export interface StubApiServer {
  url: string;
  /** The PEM file of the certificate authority (the self-signed certificate itself). */
  caFile: string;
  /** The `sub` of each request it authenticated, and how many it refused. */
  authenticated: string[];
  refused: number;
  stop(): Promise<void>;
}

export async function startStubApiServer(options: {
  issuer: string;
  audience: string;
  dir: string;
}): Promise<StubApiServer> {
  const keyFile = join(options.dir, `${options.audience.replace(/\W/g, '_')}.key`);
  const caFile = join(options.dir, `${options.audience.replace(/\W/g, '_')}.crt`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      caFile,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  const metadata = (await (await fetch(`${options.issuer}/.well-known/openid-configuration`)).json()) as {
    jwks_uri: string;
  };
  const jwks = createLocalJWKSet((await (await fetch(metadata.jwks_uri)).json()) as JSONWebKeySet);

  const stub: StubApiServer = { url: '', caFile, authenticated: [], refused: 0, stop: async () => {} };
  const server: Server = createServer(
    { key: await readFile(keyFile), cert: await readFile(caFile) },
    async (req, res) => {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      let subject: string | undefined;
      if (token !== undefined) {
        try {
          const { payload } = await jwtVerify(token, jwks, {
            issuer: options.issuer,
            audience: options.audience,
          });
          subject = payload.sub;
        } catch {
          subject = undefined;
        }
      }
      res.setHeader('content-type', 'application/json');
      if (subject === undefined) {
        stub.refused += 1;
        res.statusCode = 401;
        res.end(
          JSON.stringify({
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message: 'Unauthorized',
            reason: 'Unauthorized',
            code: 401,
          }),
        );
        return;
      }
      stub.authenticated.push(subject);
      if (req.method === 'GET' && req.url === '/api') {
        res.end(
          JSON.stringify({
            kind: 'APIVersions',
            versions: ['v1'],
            serverAddressByClientCIDRs: [
              { clientCIDR: '0.0.0.0/0', serverAddress: stub.url.slice('https://'.length) },
            ],
          }),
        );
        return;
      }
      res.statusCode = 404;
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          reason: 'NotFound',
          code: 404,
        }),
      );
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stub.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stub.stop = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return stub;
}
