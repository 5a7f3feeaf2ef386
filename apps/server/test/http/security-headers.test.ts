import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { freePort, startTestServer, type TestServer } from '../helpers/server.js';

const BROWSER = { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8' };

// What helmet sends on every page whatever the issuer (with idgate's policy and frame option).
const PAGE_HEADERS = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'DENY',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
};
const POLICY = [
  "default-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "img-src 'self'",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self'",
];
const HSTS = 'max-age=31536000; includeSubDomains';
// Headers of the pages that no JSON answer of the API may carry.
const PAGE_ONLY = [
  'content-security-policy',
  'strict-transport-security',
  'x-frame-options',
  'cross-origin-opener-policy',
  'cross-origin-resource-policy',
  'origin-agent-cluster',
  'referrer-policy',
  'x-dns-prefetch-control',
  'x-download-options',
  'x-permitted-cross-domain-policies',
  'x-xss-protection',
];

/** The directives of a Content-Security-Policy, in order. */
function directives(policy: string | null): string[] {
  return (policy ?? '').split(';').map((directive) => directive.trim());
}

describe.each(testDatabaseUrls())('security headers from helmet on $name', (kind) => {
  // Each issuer as a deployment has it: idgate listens on loopback http, a proxy in front
  // terminates TLS for the https ones.
  const issuers = {
    'http loopback': (port: number) => `http://127.0.0.1:${port}/oauth`,
    'https public host': () => 'https://id.example.com/oauth',
    'https loopback': (port: number) => `https://localhost:${port}/oauth`,
  } as const;
  const servers = new Map<keyof typeof issuers, TestServer>();
  const ports = new Map<keyof typeof issuers, number>();
  let apiKey: string;

  beforeAll(async () => {
    for (const [name, issuer] of Object.entries(issuers) as Array<
      [keyof typeof issuers, (port: number) => string]
    >) {
      const port = await freePort();
      ports.set(name, port);
      servers.set(name, await startTestServer(kind, { issuer: issuer(port), port }));
    }
    apiKey = await (servers.get('https public host') as TestServer).addApiKey(['admin', 'tokenreview']);
  }, 60_000);
  afterAll(async () => {
    for (const server of servers.values()) await server.close();
  });

  /** A listening server's page (or API answer) at `path` of its issuer's path. */
  const get = (name: keyof typeof issuers, path: string, headers: Record<string, string> = BROWSER) => {
    return fetch(`http://127.0.0.1:${ports.get(name)}${path}`, { headers, redirect: 'manual' });
  };

  it.each(['/oauth/device', '/oauth/logout', '/oauth/no-such-page'])(
    "gives the page %s helmet's headers and idgate's policy",
    async (path) => {
      const page = await get('http loopback', path);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      for (const [name, value] of Object.entries(PAGE_HEADERS))
        expect(page.headers.get(name), name).toBe(value);
      expect(directives(page.headers.get('content-security-policy'))).toEqual(POLICY);
      expect(page.headers.get('cache-control')).toBe('no-store');
      await page.body?.cancel();
    },
  );

  it('sends Strict-Transport-Security and upgrade-insecure-requests for an https issuer on a public host', async () => {
    const page = await get('https public host', '/oauth/device');
    expect(page.status).toBe(200);
    expect(page.headers.get('strict-transport-security')).toBe(HSTS);
    expect(directives(page.headers.get('content-security-policy'))).toEqual([
      ...POLICY,
      'upgrade-insecure-requests',
    ]);
    for (const [name, value] of Object.entries(PAGE_HEADERS))
      expect(page.headers.get(name), name).toBe(value);
    // An error page too.
    const missing = await get('https public host', '/oauth/no-such-page');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('strict-transport-security')).toBe(HSTS);
  });

  it('sends no Strict-Transport-Security for an http issuer, nor for https on a loopback host', async () => {
    const plain = await get('http loopback', '/oauth/device');
    expect(plain.status).toBe(200);
    expect(plain.headers.get('strict-transport-security')).toBeNull();
    expect(plain.headers.get('content-security-policy')).not.toContain('upgrade-insecure-requests');
    const local = await get('https loopback', '/oauth/device');
    expect(local.status).toBe(200);
    expect(local.headers.get('strict-transport-security')).toBeNull();
    expect(local.headers.get('content-security-policy')).toContain('upgrade-insecure-requests');
  });

  it('leaves the JSON API with its own minimal headers, whatever the issuer', async () => {
    const answers = [
      await get('https public host', '/oauth/.well-known/openid-configuration', {}),
      await get('https public host', '/oauth/keys', {}),
      await get('https public host', '/admin/v1/users', { authorization: `Bearer ${apiKey}` }),
      await get('https public host', '/admin/v1/users', {}),
      await fetch(`http://127.0.0.1:${ports.get('https public host')}/oauth/authenticate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          spec: { token: 'not-a-token' },
        }),
      }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 401, 200]);
    for (const answer of answers) {
      expect(answer.headers.get('content-type')).toMatch(/^application\/(problem\+)?json/);
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      for (const name of PAGE_ONLY) expect(answer.headers.get(name), `${answer.url} ${name}`).toBeNull();
      await answer.body?.cancel();
    }
    // Admin answers are not cached, as before.
    expect(answers[2]?.headers.get('cache-control')).toBe('no-store');
  });
});
