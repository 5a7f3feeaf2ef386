import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const REVIEW = '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"x"}}';

describe.each(testDatabaseUrls())('headers every response carries, on $name', (kind) => {
  let t: TestApp;
  let reviewKey: string;

  beforeAll(async () => {
    t = await startTestApp(kind);
    reviewKey = await t.addApiKey(['tokenreview']);
  });
  afterAll(async () => t?.close());

  const discovery = () => `${t.issuer}/.well-known/openid-configuration`;
  const review = (headers: Record<string, string>, body = REVIEW) =>
    t.fetch(`${t.issuer}/authenticate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });

  it.each([
    ['a review (200)', () => review({ authorization: `Bearer ${reviewKey}` }), 200],
    ['a review with the key known from memory (200)', () => review({ authorization: reviewKey }), 200],
    ['a review without a key (401)', () => review({}), 401],
    ['a review with a broken body (400)', () => review({ authorization: reviewKey }, '{"a":'), 400],
    [
      'a review that is too large (413)',
      () => review({ authorization: reviewKey }, `{"x":"${'x'.repeat(70_000)}"}`),
      413,
    ],
    ['discovery (200)', () => t.fetch(discovery()), 200],
    [
      'discovery with a bad Authorization header (401)',
      () => t.fetch(discovery(), { headers: { authorization: 'Bearer x' } }),
      401,
    ],
    ['the JWKS (200)', () => t.fetch(`${t.issuer}/keys`), 200],
    ['an unknown path (404)', () => t.fetch(`${t.baseUrl}/nope`), 404],
  ])('%s: a fresh X-Request-Id and X-Content-Type-Options: nosniff', async (_name, send, status) => {
    const first = await send();
    const second = await send();
    for (const response of [first, second]) {
      expect(response.status).toBe(status);
      expect(response.headers.get('x-request-id')).toMatch(UUID);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
    expect(first.headers.get('x-request-id')).not.toBe(second.headers.get('x-request-id'));
  });

  it('a 304 carries them too', async () => {
    const etag = (await t.fetch(discovery())).headers.get('etag') as string;
    const response = await t.fetch(discovery(), { headers: { 'if-none-match': etag } });
    expect(response.status).toBe(304);
    expect(response.headers.get('x-request-id')).toMatch(UUID);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('echoes a well-formed incoming X-Request-Id, replaces any other, and logs the one it answers', async () => {
    const echoed = await review({ authorization: reviewKey, 'x-request-id': 'abc.DEF_12-3' });
    expect(echoed.headers.get('x-request-id')).toBe('abc.DEF_12-3');
    for (const odd of ['a b', 'x'.repeat(65), 'a/b', '']) {
      const replaced = await t.fetch(discovery(), { headers: { 'x-request-id': odd } });
      expect(replaced.headers.get('x-request-id')).toMatch(UUID);
    }
    const response = await review({ authorization: reviewKey });
    const id = response.headers.get('x-request-id') as string;
    const logged = (reqId: string) =>
      t.logs
        .map((line) => JSON.parse(line) as { reqId?: string; msg?: string })
        .filter((line) => line.reqId === reqId)
        .map((line) => line.msg);
    await expect.poll(() => logged(id)).toEqual(['incoming request', 'request completed']);
    expect(logged('abc.DEF_12-3')).toEqual(['incoming request', 'request completed']);
  });
});
