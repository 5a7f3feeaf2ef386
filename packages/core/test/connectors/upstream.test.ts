import { GitHubUser } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import type { ConnectorFailure } from '../../src/connectors/types.js';
import { redact, Upstream } from '../../src/connectors/upstream.js';
import { connectorFailure } from './connector-failure.js';

const SECRET = 'client-secret-7f3a9c';
const TOKEN = 'gho_tokenOfTheUser0123456789';

/** A stub `fetch` answering each call with the next reply, and the URLs it was called with. */
function stub(...replies: Array<Response | ((init: RequestInit) => Promise<Response>)>) {
  const calls: string[] = [];
  const fetch = async (url: string | URL | Request, init: RequestInit = {}) => {
    calls.push(String(url));
    const reply = replies.shift();
    if (reply === undefined) throw new Error('no more replies');
    return typeof reply === 'function' ? reply(init) : reply;
  };
  return { calls, upstream: new Upstream('Example', { fetch, timeoutMs: 100 }, [SECRET]) };
}

const failure = (promise: Promise<unknown>, expected: ConnectorFailure) =>
  connectorFailure(promise, expected, [SECRET, TOKEN]);

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

describe('one rule for an upstream that cannot serve', () => {
  it('reports 429 with the wait Retry-After asks for, in seconds or as a date, and sends once', async () => {
    const { upstream, calls } = stub(json({}, 429, { 'retry-after': '120' }));
    const error = await failure(upstream.fetch('https://up.example/token'), 'upstream_unavailable');
    expect(error.message).toBe('Example is unavailable (HTTP 429); try again in 120 seconds');
    expect(calls).toHaveLength(1);

    const date = new Date(Date.now() + 90_000).toUTCString();
    const dated = stub(json({}, 503, { 'retry-after': date })).upstream;
    expect((await failure(dated.fetch('https://up.example/'), 'upstream_unavailable')).message).toMatch(
      /^Example is unavailable \(HTTP 503\); try again in (89|90) seconds$/,
    );
  });

  it('leaves out a Retry-After that is missing, past or unreadable', async () => {
    for (const retryAfter of [undefined, 'Wed, 21 Oct 2015 07:28:00 GMT', 'soon', '-5']) {
      const headers: Record<string, string> = retryAfter === undefined ? {} : { 'retry-after': retryAfter };
      const { upstream } = stub(json({}, 429, headers));
      expect((await failure(upstream.fetch('https://up.example/'), 'upstream_unavailable')).message).toBe(
        'Example is unavailable (HTTP 429)',
      );
    }
  });

  it('takes a 403 with Retry-After as a rate limit (GitHub), and any other 403 as an answer', async () => {
    const { upstream } = stub(json({}, 403, { 'retry-after': '60' }), json({ message: 'Forbidden' }, 403));
    expect((await failure(upstream.fetch('https://up.example/'), 'upstream_unavailable')).message).toBe(
      'Example is unavailable (HTTP 403); try again in 60 seconds',
    );
    expect((await upstream.fetch('https://up.example/')).status).toBe(403);
  });

  it('reports 5xx, a refused connection and a timeout (the body included) as unavailable', async () => {
    const hangingBody = async (init: RequestInit) =>
      new Response(
        new ReadableStream({
          start: (controller) =>
            init.signal?.addEventListener('abort', () => controller.error(init.signal?.reason)),
        }),
      );
    const never = (init: RequestInit) =>
      new Promise<Response>((_, reject) =>
        init.signal?.addEventListener('abort', () => reject(init.signal?.reason)),
      );
    const refused = async () => {
      throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:9') });
    };
    const { upstream } = stub(
      new Response('<html>Bad Gateway</html>', { status: 502 }),
      refused,
      never,
      hangingBody,
    );
    expect((await failure(upstream.fetch('https://up.example/'), 'upstream_unavailable')).message).toBe(
      'Example is unavailable (HTTP 502)',
    );
    const down = await failure(upstream.fetch('https://up.example/'), 'upstream_unavailable');
    expect(down.message).toBe('Example did not answer');
    expect(String(down.cause)).toBe(
      'Error: TypeError: fetch failed <- Error: connect ECONNREFUSED 127.0.0.1:9',
    );
    for (let i = 0; i < 2; i++) {
      const started = Date.now();
      expect((await failure(upstream.fetch('https://up.example/'), 'upstream_unavailable')).message).toBe(
        'Example did not answer',
      );
      expect(Date.now() - started).toBeLessThan(2_000);
    }
  });

  it('never follows a redirect', async () => {
    const { upstream } = stub(async (init) => {
      expect(init.redirect).toBe('manual');
      return new Response(null, { status: 302, headers: { location: 'https://elsewhere.example/' } });
    });
    expect((await upstream.fetch('https://up.example/')).status).toBe(302);
  });
});

describe('reading an answer', () => {
  it('calls a body that is not JSON, or not what the schema says, an invalid response', async () => {
    const { upstream } = stub(
      new Response(`{"token": "${TOKEN}", garbage`, { status: 200 }),
      json({ id: '1', login: 'octocat' }),
      json({ message: 'Forbidden' }, 403),
    );
    const notJson = await failure(
      upstream.read(await upstream.fetch('https://up.example/user'), '/user', GitHubUser),
      'invalid_upstream_response',
    );
    expect(notJson.message).toBe('Example answered the /user request with no JSON');
    const wrong = await failure(
      upstream.read(await upstream.fetch('https://up.example/user'), '/user', GitHubUser),
      'invalid_upstream_response',
    );
    expect(wrong.message).toBe(
      'Example answered the /user request unexpectedly (id: Invalid input: expected number, received string)',
    );
    const refused = await failure(
      upstream.read(await upstream.fetch('https://up.example/user'), '/user', GitHubUser),
      'upstream_error',
    );
    expect(refused.message).toBe('Example refused the /user request (HTTP 403)');
  });

  it('refuses a token the upstream does not take (401) as told', async () => {
    const { upstream } = stub(json({ message: 'Bad credentials' }, 401));
    const error = await failure(
      upstream.get(new URL('https://up.example/user'), TOKEN, 'invalid_upstream_token', {}),
      'invalid_upstream_token',
    );
    expect(error.message).toBe('Example did not accept the access token');
  });
});

describe('one redaction rule', () => {
  it('drops upstream text that holds a secret or a JWT, or is not plain text; cuts long text', () => {
    expect(redact('bad_verification_code', [SECRET])).toBe('bad_verification_code');
    expect(redact(`the secret ${SECRET} is wrong`, [SECRET])).toBe('');
    expect(redact('token eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl expired', [])).toBe('');
    expect(redact('<script>alert(1)</script>', [])).toBe('');
    expect(redact('line\r\nInjected: header', [])).toBe('');
    expect(redact(42, [])).toBe('');
    expect(redact('y'.repeat(500), [], 200)).toBe(`${'y'.repeat(199)}…`);
  });

  it('describes a cause by names, codes and redacted messages only', async () => {
    const { upstream } = stub();
    const library = Object.assign(
      new Error(`refused code ${TOKEN}`, { cause: { body: { access_token: TOKEN } } }),
      {
        code: 'OAUTH_SOMETHING',
      },
    );
    const parse = new Error('outer', { cause: new SyntaxError(`Unexpected token in "${TOKEN}"`) });
    const first = upstream.error('upstream_error', 'Example refused the sign-in', library, [TOKEN]);
    expect(String(first.cause)).toBe('Error: Error OAUTH_SOMETHING: (withheld)');
    const second = upstream.error('invalid_upstream_response', 'm', parse);
    expect(String(second.cause)).toBe('Error: Error: outer <- SyntaxError: (withheld)');
    await failure(Promise.reject(first), 'upstream_error');
    await failure(Promise.reject(second), 'invalid_upstream_response');
  });
});
