import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';

describe.each(testDatabaseUrls())('GET / on $name', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(async () => t?.close());

  it('tells a program the issuer and where the public endpoints are, each of which answers', async () => {
    const response = await t.fetch(`${t.baseUrl}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('vary')).toMatch(/accept/i);
    const index = (await response.json()) as Record<string, unknown> & { health: Record<string, string> };
    expect(index).toEqual({
      service: 'idgate',
      issuer: t.issuer,
      discovery: `${t.issuer}/.well-known/openid-configuration`,
      jwks: `${t.issuer}/keys`,
      openapi: `${t.baseUrl}/openapi.json`,
      health: { live: `${t.baseUrl}/healthz`, ready: `${t.baseUrl}/readyz` },
    });
    for (const url of [index.discovery, index.jwks, index.openapi, index.health.live, index.health.ready])
      expect([url, (await t.fetch(url as string)).status]).toEqual([url, 200]);
  });

  it('shows a browser a page naming the issuer, with links that answer', async () => {
    const response = await t.fetch(`${t.baseUrl}/`, {
      headers: { accept: 'text/html,application/xhtml+xml' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    const page = await response.text();
    expect(page).toContain('<h1>idgate</h1>');
    expect(page).toContain(`<code>${t.issuer}</code>`);
    const links = [...page.matchAll(/<a href="([^"]+)">/g)].map((match) => match[1] as string);
    expect(links).toEqual([
      `${t.issuer}/.well-known/openid-configuration`,
      `${t.issuer}/keys`,
      `${t.baseUrl}/openapi.json`,
      `${t.baseUrl}/readyz`,
      `${t.baseUrl}/healthz`,
    ]);
    for (const url of links) expect([url, (await t.fetch(url)).status]).toEqual([url, 200]);
  });

  it('still answers a page a browser asks for that does not exist with a page, and a program with a problem', async () => {
    const browser = await t.fetch(`${t.baseUrl}/no-such-page`, { headers: { accept: 'text/html' } });
    expect(browser.status).toBe(404);
    const page = await browser.text();
    expect(page).toContain('<h1>Not Found</h1>');
    // A way back, and the id to quote to whoever runs the server (the one its log lines carry).
    expect(page).toContain('Go back to the application you came from');
    expect(page).toContain(`Request id: <code>${browser.headers.get('x-request-id')}</code>`);
    const program = await t.fetch(`${t.baseUrl}/no-such-page`);
    expect(program.status).toBe(404);
    expect(await program.json()).toMatchObject({ status: 404, code: 'not_found' });
  });
});
