import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { injectFetch, TEST_ORIGIN } from './app.js';

// The route tests trust this fetch to answer as the global one would from a listening server.
describe('injectFetch', () => {
  const app = Fastify();
  const fetch = injectFetch(app);
  beforeAll(async () => {
    app.get('/echo', async (request) => ({ headers: request.headers, ip: request.ip }));
    app.post('/echo', async (request, reply) =>
      reply.header('content-type', 'text/plain').send(`${request.headers['content-type']}|${request.body}`),
    );
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_request, body, done) => done(null, body),
    );
    app.get('/cookies', async (_request, reply) => {
      reply.header('set-cookie', ['a=1; Path=/; HttpOnly', 'b=2; Path=/x']);
      return 'ok';
    });
    app.get('/cached', async (_request, reply) => reply.code(304).send());
    app.get('/empty', async (_request, reply) => reply.code(204).send());
    app.post('/see-other', async (_request, reply) => reply.redirect('/echo', 303));
    app.post('/temporary', async (_request, reply) => reply.redirect('/echo', 307));
    app.get('/away', async (_request, reply) => reply.redirect('https://elsewhere.example/', 302));
    await app.ready();
  });
  afterAll(() => app.close());

  it('sends what the global fetch would: the Host of the URL, its defaults, and the body’s content type', async () => {
    const response = await fetch(`${TEST_ORIGIN}/echo?x=1`, { headers: { 'x-one': 'a' } });
    expect(response.status).toBe(200);
    expect(response.statusText).toBe('OK');
    expect(response.url).toBe(`${TEST_ORIGIN}/echo?x=1`);
    const { headers, ip } = (await response.json()) as { headers: Record<string, string>; ip: string };
    expect(headers).toMatchObject({ host: 'idgate.test', accept: '*/*', 'user-agent': 'node', 'x-one': 'a' });
    expect(ip).toBe('127.0.0.1');
    const posted = await fetch(new URL('/echo', TEST_ORIGIN), {
      method: 'POST',
      body: new URLSearchParams({ a: 'b c' }),
    });
    expect(await posted.text()).toBe('application/x-www-form-urlencoded;charset=UTF-8|a=b+c');
  });

  it('keeps every Set-Cookie header apart', async () => {
    const response = await fetch(`${TEST_ORIGIN}/cookies`);
    expect(response.headers.getSetCookie()).toEqual(['a=1; Path=/; HttpOnly', 'b=2; Path=/x']);
  });

  it('answers 204 and 304 without a body', async () => {
    expect(await (await fetch(`${TEST_ORIGIN}/cached`)).text()).toBe('');
    expect((await fetch(`${TEST_ORIGIN}/empty`)).status).toBe(204);
  });

  it('follows redirects as the Fetch standard says unless told not to', async () => {
    const manual = await fetch(`${TEST_ORIGIN}/see-other`, { method: 'POST', body: 'x', redirect: 'manual' });
    expect(manual.status).toBe(303);
    expect(manual.headers.get('location')).toBe('/echo');
    const followed = await fetch(`${TEST_ORIGIN}/see-other`, { method: 'POST', body: 'x' });
    expect(followed.redirected).toBe(true);
    expect(followed.url).toBe(`${TEST_ORIGIN}/echo`);
    expect(await followed.json()).toMatchObject({ headers: { host: 'idgate.test' } });
    const kept = await fetch(`${TEST_ORIGIN}/temporary`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=1',
    });
    expect(await kept.text()).toBe('application/x-www-form-urlencoded|a=1');
    await expect(fetch(`${TEST_ORIGIN}/see-other`, { method: 'POST', redirect: 'error' })).rejects.toThrow(
      TypeError,
    );
  });

  it('reaches nothing but the app', async () => {
    await expect(fetch('http://127.0.0.1:9/echo')).rejects.toThrow(TypeError);
    await expect(fetch(`${TEST_ORIGIN}/away`)).rejects.toThrow(/elsewhere\.example/);
    expect((await fetch(`${TEST_ORIGIN}/away`, { redirect: 'manual' })).status).toBe(302);
  });
});
