import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createIdgateClient,
  externalLoginUrl,
  IdgateSchemaError,
  IdgateSdkError,
  logoutUrl,
} from '../src/index.js';

let server: Server;
let baseUrl: string;
let reply: { status: number; body: unknown } = { status: 200, body: {} };
const paths: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    paths.push(req.url ?? '');
    res.writeHead(reply.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(reply.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/idgate`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('health and readiness probes', () => {
  it('reads /healthz and /readyz below the base URL; a 503 readiness resolves with the failing checks', async () => {
    const client = createIdgateClient({ baseUrl });
    reply = { status: 200, body: { status: 'ok' } };
    expect(await client.health()).toEqual({ status: 'ok' });
    reply = { status: 503, body: { status: 'unavailable', checks: { database: 'failing', keys: 'ok' } } };
    expect(await client.readiness()).toEqual({
      ready: false,
      status: 'unavailable',
      checks: { database: 'failing', keys: 'ok' },
    });
    expect(paths.slice(-2)).toEqual(['/idgate/healthz', '/idgate/readyz']);
  });

  it('rejects answers that are not probe answers', async () => {
    const client = createIdgateClient({ baseUrl });
    reply = { status: 200, body: { status: 'fine' } };
    await expect(client.health()).rejects.toBeInstanceOf(IdgateSchemaError);
    reply = { status: 200, body: { status: 'ok', checks: { database: 'meh' } } };
    await expect(client.readiness()).rejects.toBeInstanceOf(IdgateSchemaError);
    reply = { status: 503, body: 'down' };
    await expect(client.readiness()).rejects.toMatchObject({ status: 503 });
  });
});

describe('RP-Initiated Logout and external sign-in URLs', () => {
  it('builds {issuer}/logout with the parameters given, encoded', () => {
    const url = logoutUrl('https://id.example.com/oauth/', {
      idTokenHint: 'eyJ.a.b',
      postLogoutRedirectUri: 'https://app.example.com/bye?x=1',
      state: 's t',
      clientId: 'app',
    });
    expect(url.href).toBe(
      'https://id.example.com/oauth/logout?id_token_hint=eyJ.a.b&post_logout_redirect_uri=https%3A%2F%2Fapp.example.com%2Fbye%3Fx%3D1&state=s+t&client_id=app',
    );
    expect(createIdgateClient({ baseUrl: 'https://id.example.com' }).logoutUrl().href).toBe(
      'https://id.example.com/oauth/logout',
    );
    expect(() => logoutUrl('https://id.example.com/oauth?x', {})).toThrow(IdgateSdkError);
    expect(() => logoutUrl('https://id.example.com/oauth', { idTokenHint: '' })).toThrow(
      'idTokenHint must be a non-empty string',
    );
  });

  it('builds {issuer}/login/{provider}, refusing a name that could change the path', () => {
    expect(createIdgateClient({ baseUrl: 'https://id.example.com/' }).externalLoginUrl('corp-sso').href).toBe(
      'https://id.example.com/oauth/login/corp-sso',
    );
    expect(externalLoginUrl('https://id.example.com/oauth', 'github', { interaction: 'abc' }).href).toBe(
      'https://id.example.com/oauth/login/github?interaction=abc',
    );
    for (const provider of ['..', 'a/b', '', '9x'])
      expect(() => externalLoginUrl('https://id.example.com/oauth', provider)).toThrow(IdgateSdkError);
    expect(() => externalLoginUrl('https://id.example.com/oauth', 'github', { interaction: '' })).toThrow(
      'interaction must be a non-empty string',
    );
  });
});
