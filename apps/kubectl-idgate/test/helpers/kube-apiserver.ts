import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';

/** The user an authenticator found behind a bearer token, as Kubernetes' `user.Info`. */
export interface KubeUser {
  username: string;
  uid?: string | undefined;
  groups: string[];
  extra?: Record<string, string[]> | undefined;
}

/** How a stub API server authenticates a bearer token: the user, or `undefined` (401). */
export type Authenticator = (token: string) => Promise<KubeUser | undefined>;

/**
 * A stand-in for a Kubernetes API server on loopback over HTTPS (a throwaway certificate made with
 * the openssl CLI): `GET /api` answers only a request whose bearer token the authenticator accepts
 * (by default: a JWT of `issuer` for `audience`, verified against the issuer's JWKS fetched once, at
 * start, with `sub` as the username); anything else is 401 like Kubernetes answers it.
 */
export interface StubApiServer {
  url: string;
  /** The PEM file of the certificate authority (the self-signed certificate itself). */
  caFile: string;
  /** The username of each request it authenticated, and how many it refused. */
  authenticated: string[];
  /** The user of each request it authenticated (username, groups...), in order. */
  users: KubeUser[];
  refused: number;
  stop(): Promise<void>;
}

/** A throwaway self-signed certificate for 127.0.0.1 (openssl CLI): its key and certificate files. */
export function selfSignedCertificate(dir: string, name: string): { keyFile: string; caFile: string } {
  const keyFile = join(dir, `${name.replace(/\W/g, '_')}.key`);
  const caFile = join(dir, `${name.replace(/\W/g, '_')}.crt`);
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
  return { keyFile, caFile };
}

/** The API server's JWT authenticator reduced to signature, issuer and audience; `sub` is the username. */
async function jwksAuthenticator(issuer: string, audience: string): Promise<Authenticator> {
  const metadata = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as {
    jwks_uri: string;
  };
  const jwks = createLocalJWKSet((await (await fetch(metadata.jwks_uri)).json()) as JSONWebKeySet);
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, jwks, { issuer, audience });
      return payload.sub === undefined ? undefined : { username: payload.sub, groups: [] };
    } catch {
      return undefined;
    }
  };
}

export async function startStubApiServer(options: {
  issuer: string;
  audience: string;
  dir: string;
  /** How tokens are authenticated; by default a JWT of `issuer` for `audience` (see above). */
  authenticate?: Authenticator;
}): Promise<StubApiServer> {
  const { keyFile, caFile } = selfSignedCertificate(options.dir, options.audience);
  const authenticate = options.authenticate ?? (await jwksAuthenticator(options.issuer, options.audience));

  const stub: StubApiServer = {
    url: '',
    caFile,
    authenticated: [],
    users: [],
    refused: 0,
    stop: async () => {},
  };
  const server: Server = createServer(
    { key: await readFile(keyFile), cert: await readFile(caFile) },
    async (req, res) => {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      // as the API server does, an authenticator that fails (webhook unreachable...) is a 401
      const user = token === undefined ? undefined : await authenticate(token).catch(() => undefined);
      res.setHeader('content-type', 'application/json');
      if (user === undefined) {
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
      stub.authenticated.push(user.username);
      stub.users.push(user);
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
