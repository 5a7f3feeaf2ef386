import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';

describe('trustProxy', () => {
  const trust = (value: string) => loadConfig({ env: { IDGATE_TRUST_PROXY: value } }).trustProxy;

  it('takes false, a hop count, or the proxies’ addresses and CIDR ranges', () => {
    expect(loadConfig({ env: {} }).trustProxy).toBe(false);
    expect(trust('false')).toBe(false);
    expect(trust('1')).toBe(1);
    expect(trust('10.0.0.0/8, 192.168.1.7,fd00::/8')).toEqual(['10.0.0.0/8', '192.168.1.7', 'fd00::/8']);
  });

  it('refuses true, saying why, and what is no address', () => {
    const problems = (value: string) => {
      try {
        trust(value);
      } catch (error) {
        if (error instanceof ConfigError) return error.problems.join('\n');
        throw error;
      }
      throw new Error(`${value} was accepted`);
    };
    expect(problems('true')).toMatch(/IDGATE_TRUST_PROXY.*could choose its own address/);
    expect(problems('10.0.0.0/33')).toMatch(/IDGATE_TRUST_PROXY/);
    expect(problems('ingress')).toMatch(/IDGATE_TRUST_PROXY/);
    expect(problems('11')).toMatch(/IDGATE_TRUST_PROXY/);
  });
});

describe.each([
  ['the ingress’s range', ['10.0.0.0/8']],
  ['one hop', 1],
] as const)('the client address behind a trusted proxy (%s)', (_name, setting) => {
  let t: TestApp;
  let client: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    t = await startTestApp(testDatabaseUrls()[0] as NonNullable<ReturnType<typeof testDatabaseUrls>[0]>, {
      trustProxy: typeof setting === 'number' ? setting : [...setting],
    });
    await t.addUser('olga', 'battery-staple-c1a325');
    client = await t.addClient({ trusted: true, grants: ['password'] });
  });
  afterAll(async () => t?.close());

  /** A failed password grant from `peer` carrying `forwarded`; answers the address idgate recorded. */
  async function recordedAddress(peer: string, forwarded: string): Promise<string | undefined> {
    await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      remoteAddress: peer,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`,
        'x-forwarded-for': forwarded,
      },
      payload: new URLSearchParams({
        grant_type: 'password',
        username: 'olga',
        password: 'wrong',
      }).toString(),
    });
    const [latest] = await t.services.storage.loginAttempts.listByUsername('olga', 1);
    return latest?.sourceAddress;
  }

  it('is the address the proxy saw, not one the client wrote in front of it', async () => {
    // The client forged 203.0.113.66; the ingress (10.1.2.3) appended the address it saw.
    expect(await recordedAddress('10.1.2.3', '203.0.113.66, 198.51.100.7')).toBe('198.51.100.7');
  });

  it.runIf(typeof setting !== 'number')(
    'is the peer’s own address when the peer is no trusted proxy',
    async () => {
      expect(await recordedAddress('203.0.113.50', '198.51.100.9')).toBe('203.0.113.50');
    },
  );
});
