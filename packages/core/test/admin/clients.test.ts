import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CLIENT_SCOPES,
  listClients,
  parseClientRegistration,
  registerClient,
  removeClient,
} from '../../src/admin/clients.js';
import { clientView } from '../../src/admin/views.js';
import { verifySecret } from '../../src/secrets.js';
import { adminPorts, rejection, thrown } from './ports.js';

const LIFETIMES = { accessTokenTtl: 600, refreshTokenTtl: 86_400, maxAccessTokenTtl: 3600 };
const FLAGS: Record<string, string> = {
  grantTypes: '--grant',
  redirectUris: '--redirect-uri',
  public: '--public',
  trusted: '--trusted',
  accessTokenTtl: '--access-token-ttl',
};

describe('a client registration', () => {
  it('fills in the defaults: client_credentials, the standard scopes, the configured lifetimes', () => {
    expect(parseClientRegistration({ name: ' CI ' }, LIFETIMES)).toEqual({
      name: 'CI',
      public: false,
      trusted: false,
      redirectUris: [],
      postLogoutRedirectUris: [],
      grantTypes: ['client_credentials'],
      scopes: DEFAULT_CLIENT_SCOPES,
      audiences: [],
      accessTokenTtl: 600,
      refreshTokenTtl: 86_400,
    });
  });

  it('gives a public client the authorization code and refresh token grants, which need a redirect URI', () => {
    const settings = parseClientRegistration(
      { name: 'app', public: true, redirectUris: ['http://127.0.0.1/cb', 'http://127.0.0.1/cb'] },
      LIFETIMES,
    );
    expect(settings.grantTypes).toEqual(['authorization_code', 'refresh_token']);
    expect(settings.redirectUris).toEqual(['http://127.0.0.1/cb']);
    expect(thrown(() => parseClientRegistration({ name: 'app', public: true }, LIFETIMES))).toMatchObject({
      code: 'invalid_input',
      object: 'client',
      message: 'grantTypes authorization_code needs at least one redirectUris',
    });
  });

  it.each([
    [
      { public: true, grantTypes: ['client_credentials'] },
      '--grant client_credentials: not allowed for a --public client, which has no secret',
    ],
    [
      { public: true, trusted: true, grantTypes: ['password'] },
      '--grant password: not allowed for a --public client, which has no secret',
    ],
    [{ grantTypes: ['password'] }, '--grant password: allowed only for a --trusted client'],
    [
      { accessTokenTtl: 3601 },
      '--access-token-ttl 3601: must be at most 3600 seconds (tokens.maxAccessTokenTtl)',
    ],
    [
      { redirectUris: ['http://app.example.com/cb'] },
      '--redirect-uri "http://app.example.com/cb": must use https (http is allowed only for localhost, 127.0.0.1 or [::1], RFC 8252 §7.3)',
    ],
    [{ grantTypes: ['authorization_code'] }, '--grant authorization_code needs at least one --redirect-uri'],
  ])('refuses %j, in the words the caller labels fields with', (fields, message) => {
    const error = thrown(() =>
      parseClientRegistration({ name: 'app', ...fields }, LIFETIMES, {
        label: (path) => FLAGS[path] ?? path,
      }),
    );
    expect(error).toMatchObject({ code: 'invalid_input', message });
  });
});

describe('registering a client', () => {
  it('gives a confidential client a generated id and secret, and stores only its hash', async () => {
    const ports = adminPorts();
    const { client, clientSecret } = await registerClient(
      ports,
      parseClientRegistration({ name: 'CI' }, LIFETIMES),
    );
    expect(client.clientId).toMatch(/^cl_[a-z2-7]{16}$/);
    expect(clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await verifySecret(clientSecret ?? '', client.secretHash ?? '')).toBe(true);
    expect(JSON.stringify(clientView(client))).not.toContain(client.secretHash);
    expect(clientView(client).createdAt).toBe('2026-11-21T10:00:00.000Z');
    expect(await listClients(ports)).toStrictEqual([client]);
  });

  it('gives a public client no secret', async () => {
    const settings = parseClientRegistration(
      { name: 'app', public: true, redirectUris: ['https://app.example.com/cb'] },
      LIFETIMES,
    );
    const { client, clientSecret } = await registerClient(adminPorts(), settings);
    expect([client.secretHash, clientSecret]).toEqual([null, undefined]);
  });

  it('removes a client once', async () => {
    const ports = adminPorts();
    const { client } = await registerClient(ports, parseClientRegistration({ name: 'CI' }, LIFETIMES));
    await removeClient(ports, client.clientId);
    expect(await listClients(ports)).toEqual([]);
    expect(await rejection(removeClient(ports, client.clientId))).toMatchObject({
      code: 'not_found',
      message: `no client ${client.clientId}`,
    });
  });
});
