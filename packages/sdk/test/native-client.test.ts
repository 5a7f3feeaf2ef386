import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createNativeClient,
  type DeviceAuthorizationResponse,
  discoverIssuer,
  IdgateDeviceFlowError,
  IdgateHttpError,
  IdgateSdkError,
  type NativeClient,
} from '../src/index.js';
import { refusingPort } from './refusing-port.js';

// ---- a scripted provider: each token request takes the next answer of `answers` ---------------
interface Recorded {
  path: string;
  form: URLSearchParams;
}
let server: Server;
let issuer: string;
let requests: Recorded[] = [];
let answers: Array<{ status: number; body: unknown }> = [];
let discoveryIssuer: string | undefined;

const metadata = () => ({
  issuer: discoveryIssuer ?? issuer,
  authorization_endpoint: `${issuer}/auth`,
  token_endpoint: `${issuer}/token`,
  userinfo_endpoint: `${issuer}/me`,
  jwks_uri: `${issuer}/jwks`,
  device_authorization_endpoint: `${issuer}/device/auth`,
  revocation_endpoint: `${issuer}/token/revocation`,
  scopes_supported: ['openid'],
  response_types_supported: ['code'],
  grant_types_supported: ['authorization_code'],
  subject_types_supported: ['public'],
  id_token_signing_alg_values_supported: ['RS256'],
  token_endpoint_auth_methods_supported: ['none'],
  claims_supported: ['sub'],
  code_challenge_methods_supported: ['S256'],
});

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '';
      if (path.endsWith('/.well-known/openid-configuration')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify(metadata()));
      }
      requests.push({ path, form: new URLSearchParams(Buffer.concat(chunks).toString('utf8')) });
      const answer = answers.shift() ?? { status: 500, body: { error: 'server_error' } };
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/issuer`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  requests = [];
  answers = [];
  discoveryIssuer = undefined;
});

/** A client whose sleeps advance a fake clock and are recorded, instead of waiting. */
async function fakeTimeClient(): Promise<{ client: NativeClient; sleeps: number[] }> {
  let now = Date.parse('2026-11-23T12:00:00Z');
  const sleeps: number[] = [];
  const client = createNativeClient({
    metadata: await discoverIssuer(issuer),
    clientId: 'kubectl',
    now: () => now,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
  });
  return { client, sleeps };
}
const device: DeviceAuthorizationResponse = {
  device_code: 'device-code-secret-0123456789',
  user_code: 'BCDF-GHJK',
  verification_uri: 'http://127.0.0.1/device',
  expires_in: 600,
  interval: 5,
};
const tokens = { access_token: 'at', token_type: 'Bearer', expires_in: 300, refresh_token: 'rt' };
const oauthError = (error: string) => ({ status: 400, body: { error } });

describe('OpenID Connect Discovery', () => {
  it('fetches {issuer}/.well-known/openid-configuration and validates it', async () => {
    const found = await discoverIssuer(issuer);
    expect(found.device_authorization_endpoint).toBe(`${issuer}/device/auth`);
  });

  it('refuses a document that names another issuer (§4.3)', async () => {
    discoveryIssuer = 'https://evil.example';
    await expect(discoverIssuer(issuer)).rejects.toThrow(/names another issuer/);
  });

  it('reports an unreachable issuer as an IdgateSdkError', async () => {
    const unreachable = `http://127.0.0.1:${await refusingPort()}/oauth`;
    await expect(discoverIssuer(unreachable, { timeoutMs: 2_000 })).rejects.toBeInstanceOf(IdgateSdkError);
  });
});

describe('RFC 8628 device authorization grant', () => {
  it('sends client_id, scope and resource to the device authorization endpoint', async () => {
    const { client } = await fakeTimeClient();
    answers.push({ status: 200, body: device });
    const answer = await client.requestDeviceAuthorization({
      scope: 'openid offline_access',
      resource: 'kubernetes:a',
    });
    expect(answer.user_code).toBe('BCDF-GHJK');
    expect(requests[0]?.path).toBe('/issuer/device/auth');
    expect(Object.fromEntries(requests[0]?.form ?? [])).toEqual({
      client_id: 'kubectl',
      scope: 'openid offline_access',
      resource: 'kubernetes:a',
    });
  });

  it('sends every resource the sign-in is to cover as its own resource parameter', async () => {
    const { client } = await fakeTimeClient();
    answers.push({ status: 200, body: device });
    await client.requestDeviceAuthorization({ scope: 'openid', resource: ['kubernetes:a', 'kubernetes:b'] });
    expect(requests[0]?.form.getAll('resource')).toEqual(['kubernetes:a', 'kubernetes:b']);
  });

  it('sends acr_values when asked for', async () => {
    const { client } = await fakeTimeClient();
    answers.push({ status: 200, body: device });
    await client.requestDeviceAuthorization({ scope: 'openid', acrValues: ['urn:idgate:acr:mfa'] });
    expect(requests[0]?.form.get('acr_values')).toBe('urn:idgate:acr:mfa');
  });

  it('says so when discovery has no device authorization endpoint', async () => {
    const client = createNativeClient({
      metadata: { ...(await discoverIssuer(issuer)), device_authorization_endpoint: undefined },
      clientId: 'kubectl',
    });
    await expect(client.requestDeviceAuthorization()).rejects.toThrow(/no device_authorization_endpoint/);
  });

  it('waits the interval before each poll, keeps going on authorization_pending, +5 s on slow_down', async () => {
    const { client, sleeps } = await fakeTimeClient();
    answers.push(
      oauthError('authorization_pending'),
      oauthError('slow_down'),
      oauthError('authorization_pending'),
    );
    answers.push({ status: 200, body: tokens });
    const result = await client.pollDeviceAuthorization(device, { resource: 'kubernetes:a' });
    expect(result.access_token).toBe('at');
    expect(sleeps).toEqual([5_000, 5_000, 10_000, 10_000]);
    expect(requests).toHaveLength(4);
    expect(Object.fromEntries(requests[3]?.form ?? [])).toEqual({
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: device.device_code,
      client_id: 'kubectl',
      resource: 'kubernetes:a',
    });
  });

  it('polls every 5 s when the response names no interval', async () => {
    const { client, sleeps } = await fakeTimeClient();
    answers.push({ status: 200, body: tokens });
    const { interval: _, ...withoutInterval } = device;
    await client.pollDeviceAuthorization(withoutInterval);
    expect(sleeps).toEqual([5_000]);
  });

  it('throws access_denied when the person denies', async () => {
    const { client } = await fakeTimeClient();
    answers.push(oauthError('authorization_pending'), oauthError('access_denied'));
    const error = await client.pollDeviceAuthorization(device).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IdgateDeviceFlowError);
    expect((error as IdgateDeviceFlowError).error).toBe('access_denied');
    expect((error as Error).message).not.toContain(device.device_code);
  });

  it('throws expired_token when the server says so', async () => {
    const { client } = await fakeTimeClient();
    answers.push(oauthError('expired_token'));
    await expect(client.pollDeviceAuthorization(device)).rejects.toMatchObject({ error: 'expired_token' });
  });

  it('stops by itself once expires_in has passed, without another request', async () => {
    const { client } = await fakeTimeClient();
    for (let i = 0; i < 200; i += 1) answers.push(oauthError('authorization_pending'));
    await expect(client.pollDeviceAuthorization({ ...device, expires_in: 30 })).rejects.toMatchObject({
      error: 'expired_token',
    });
    // polls at 5, 10, 15, 20, 25 s; at 30 s the code has expired
    expect(requests).toHaveLength(5);
  });

  it('passes other errors on as IdgateHttpError', async () => {
    const { client } = await fakeTimeClient();
    answers.push(oauthError('invalid_client'));
    const error = await client.pollDeviceAuthorization(device).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IdgateHttpError);
    expect((error as IdgateHttpError).oauthError?.error).toBe('invalid_client');
  });

  it('stops when the signal aborts', async () => {
    const client = createNativeClient({ metadata: await discoverIssuer(issuer), clientId: 'kubectl' });
    const controller = new AbortController();
    const polling = client.pollDeviceAuthorization(device, { signal: controller.signal });
    controller.abort(new Error('stopped'));
    await expect(polling).rejects.toThrow('stopped');
    expect(requests).toHaveLength(0);
  });
});

describe('RFC 8252 native app: code flow with PKCE and RFC 8707 resource', () => {
  it('builds the request at the discovered authorization endpoint', async () => {
    const { client } = await fakeTimeClient();
    const request = await client.createAuthorizationRequest({
      redirectUri: 'http://127.0.0.1:49152/callback',
      scope: 'openid offline_access',
      resource: 'kubernetes:a',
    });
    expect(`${request.url.origin}${request.url.pathname}`).toBe(`${issuer}/auth`);
    const query = request.url.searchParams;
    expect(query.get('client_id')).toBe('kubectl');
    expect(query.get('code_challenge_method')).toBe('S256');
    expect(query.get('resource')).toBe('kubernetes:a');
    expect(query.get('state')).toBe(request.state);
    const both = await client.createAuthorizationRequest({
      redirectUri: 'http://127.0.0.1:49152/callback',
      scope: 'openid offline_access',
      resource: ['kubernetes:a', 'kubernetes:b'],
    });
    expect(both.url.searchParams.getAll('resource')).toEqual(['kubernetes:a', 'kubernetes:b']);
  });

  it('exchanges the code with the verifier and the resource', async () => {
    const { client } = await fakeTimeClient();
    answers.push({ status: 200, body: tokens });
    const verifier = 'v'.repeat(43);
    await client.exchangeCode({
      code: 'the-code',
      redirectUri: 'http://127.0.0.1:1/callback',
      codeVerifier: verifier,
      resource: 'kubernetes:a',
    });
    expect(requests[0]?.path).toBe('/issuer/token');
    expect(Object.fromEntries(requests[0]?.form ?? [])).toEqual({
      grant_type: 'authorization_code',
      code: 'the-code',
      redirect_uri: 'http://127.0.0.1:1/callback',
      code_verifier: verifier,
      client_id: 'kubectl',
      resource: 'kubernetes:a',
    });
  });

  it('refreshes with a resource and keeps the refresh token out of error messages', async () => {
    const { client } = await fakeTimeClient();
    answers.push({ status: 200, body: tokens });
    await client.refresh({ refreshToken: 'refresh-secret-0123456789', resource: 'kubernetes:b' });
    expect(Object.fromEntries(requests[0]?.form ?? [])).toEqual({
      grant_type: 'refresh_token',
      refresh_token: 'refresh-secret-0123456789',
      client_id: 'kubectl',
      resource: 'kubernetes:b',
    });
    answers.push({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'refresh-secret-0123456789 is gone' },
    });
    const error = await client
      .refresh({ refreshToken: 'refresh-secret-0123456789' })
      .catch((e: unknown) => e);
    expect((error as IdgateHttpError).oauthError?.error).toBe('invalid_grant');
    expect((error as Error).message).not.toContain('refresh-secret-0123456789');
  });

  it('revokes at the revocation endpoint (RFC 7009)', async () => {
    const { client } = await fakeTimeClient();
    answers.push({ status: 200, body: '' });
    await client.revoke({ token: 'rt', tokenTypeHint: 'refresh_token' });
    expect(requests[0]?.path).toBe('/issuer/token/revocation');
    expect(Object.fromEntries(requests[0]?.form ?? [])).toEqual({
      token: 'rt',
      token_type_hint: 'refresh_token',
      client_id: 'kubectl',
    });
  });
});
