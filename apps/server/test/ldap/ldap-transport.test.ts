import { createServer, type Server, type Socket } from 'node:net';
import { inspect } from 'node:util';
import { ConnectorError } from '@idgate/core';
import { LdapProviderConfig } from '@idgate/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLdapConnector } from '../../src/connectors/ldap.js';
import { GROUPS_DN, hasSlapd, PEOPLE_DN, type Slapd, startSlapd } from '../helpers/slapd.js';
import { recordingFactory } from './recording-client.js';

let tlsSlapd: Slapd;
let plainSlapd: Slapd;

beforeAll(async () => {
  [tlsSlapd, plainSlapd] = await Promise.all([startSlapd({ tls: true }), startSlapd()]);
});

afterAll(async () => {
  await Promise.all([tlsSlapd?.stop(), plainSlapd?.stop()]);
});

const PASSWORD_MARKER = 'alice-pass';

function config(slapd: Slapd, overrides: Record<string, unknown> = {}): LdapProviderConfig {
  return LdapProviderConfig.parse({
    type: 'ldap',
    name: 'corp-ldap',
    url: slapd.url,
    bindDn: slapd.managerDn,
    bindPassword: slapd.managerPassword,
    timeoutMs: 2_000,
    userSearch: { baseDn: PEOPLE_DN },
    groupSearch: { baseDn: GROUPS_DN },
    ...overrides,
  });
}

/** The connector's refusal; fails when it signs in or throws anything else. */
async function refusal(config: LdapProviderConfig, password = PASSWORD_MARKER): Promise<ConnectorError> {
  const { factory, clients } = recordingFactory();
  const error = await createLdapConnector(config, { clientFactory: factory })
    .authenticate('alice', password)
    .then(
      () => undefined,
      (caught: unknown) => caught,
    );
  expect(error).toBeInstanceOf(ConnectorError);
  // No secret anywhere in the error, its cause included.
  const everything = `${String(error)} ${inspect(error, { depth: 10 })}`;
  expect(everything).not.toContain(password);
  expect(everything).not.toContain(config.bindPassword ?? '\u0000');
  expect(clients.every((client) => client.unbound)).toBe(true);
  return error as ConnectorError;
}

describe.skipIf(!hasSlapd)('LDAP connector transport', () => {
  it('signs in over LDAPS with the configured CA', async () => {
    const connector = createLdapConnector(
      config(tlsSlapd, { url: tlsSlapd.ldapsUrl, caCertificate: tlsSlapd.caCertificate }),
    );
    expect(await connector.authenticate('alice', 'alice-pass')).toMatchObject({
      username: 'alice',
      groups: ['admins', 'devs'],
    });
    // The certificate names localhost too.
    const byName = createLdapConnector(
      config(tlsSlapd, {
        url: tlsSlapd.ldapsUrl?.replace('127.0.0.1', 'localhost'),
        caCertificate: tlsSlapd.caCertificate,
      }),
    );
    expect(await byName.authenticate('bob', 'bob-pass')).toMatchObject({ username: 'bob' });
  });

  it('refuses LDAPS to a server whose certificate it cannot trust', async () => {
    const error = await refusal(config(tlsSlapd, { url: tlsSlapd.ldapsUrl }));
    expect(error.failure).toBe('upstream_unavailable');
    expect(error.message).toMatch(/trusted TLS connection/);
  });

  it('signs in with StartTLS and the configured CA, and never speaks plaintext without it', async () => {
    const connector = createLdapConnector(
      config(tlsSlapd, { startTls: true, caCertificate: tlsSlapd.caCertificate }),
    );
    expect(await connector.authenticate('alice', 'alice-pass')).toMatchObject({ username: 'alice' });

    const untrusted = await refusal(config(tlsSlapd, { startTls: true }));
    expect(untrusted).toMatchObject({ failure: 'upstream_unavailable' });
    expect(untrusted.message).toMatch(/trusted TLS connection/);
  });

  it('fails when the directory does not offer StartTLS or LDAPS', async () => {
    const noStartTls = await refusal(config(plainSlapd, { startTls: true }));
    expect(noStartTls).toMatchObject({
      failure: 'upstream_unavailable',
      message: 'the directory refused StartTLS',
    });

    const ldapsToPlain = await refusal(
      config(plainSlapd, { url: plainSlapd.url.replace('ldap:', 'ldaps:') }),
    );
    expect(ldapsToPlain.failure).toBe('upstream_unavailable');
  });

  it('reports a stopped directory as upstream_unavailable', async () => {
    const gone = await startSlapd();
    const settings = config(gone);
    await gone.stop();
    const started = Date.now();
    const error = await refusal(settings);
    expect(error).toMatchObject({ failure: 'upstream_unavailable', message: 'the directory did not answer' });
    expect(Date.now() - started).toBeLessThan(settings.timeoutMs);
  });

  it('gives up on a directory that accepts the connection but never answers, within the timeout', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    try {
      for (const overrides of [{}, { startTls: true }, { bindDn: undefined, bindPassword: undefined }]) {
        const settings = config(plainSlapd, {
          url: `ldap://127.0.0.1:${address.port}`,
          timeoutMs: 300,
          ...overrides,
        });
        const started = Date.now();
        const error = await refusal(settings);
        expect(error).toMatchObject({
          failure: 'upstream_unavailable',
          message: 'the directory did not answer',
        });
        expect(Date.now() - started).toBeLessThan(1_500);
      }
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('keeps the service account password out of its refusal', async () => {
    const error = await refusal(config(plainSlapd, { bindPassword: 'service-account-secret-xyz' }));
    expect(error.failure).toBe('upstream_error');
  });
});
