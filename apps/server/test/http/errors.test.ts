import { request as httpRequest } from 'node:http';
import { ConnectorError, StorageUnavailableError } from '@idgate/core';
import { OAuthError, Problem } from '@idgate/schema';
import SqliteDatabase from 'better-sqlite3';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { errorHandling } from '../../src/http/errors.js';
import { pageHeaders } from '../../src/http/page-headers.js';
import { PageLooks } from '../../src/pages/look.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const LARGE = `x=${'a'.repeat(70_000)}`;

interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

// fetch would normalise a malformed URL; a raw request sends it as written.
function rawGet(baseUrl: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${baseUrl}${path}`, { headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => {
        const answer = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          if (typeof value === 'string') answer.set(name, value);
        }
        resolve({ status: response.statusCode ?? 0, headers: answer, body });
      });
    });
    request.on('error', reject);
    request.end();
  });
}

async function answer(response: Response): Promise<Answer> {
  return { status: response.status, headers: response.headers, body: await response.text() };
}

function expectOAuthError(response: Answer, status: number, error: string): OAuthError {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = OAuthError.parse(JSON.parse(response.body));
  expect(body.error).toBe(error);
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
  return body;
}

function expectProblem(response: Answer, status: number, code: string): Problem {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const problem = Problem.parse(JSON.parse(response.body));
  expect([problem.status, problem.code]).toEqual([status, code]);
  return problem;
}

function expectPage(response: Answer, status: number, message: RegExp): void {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(response.body).toMatch(/^<!doctype html>/);
  expect(response.body).toContain('href="/oauth/assets/idgate.css"');
  expect(response.body).toMatch(message);
}

function expectBaseHeaders(response: Answer): void {
  expect(response.headers.get('x-request-id')).toMatch(UUID);
  expect(response.headers.get('x-content-type-options')).toBe('nosniff');
}

describe.each(testDatabaseUrls().filter((kind) => kind.name === 'sqlite'))(
  'errors answer in the format of their route, on $name',
  (kind) => {
    let t: TestServer;
    let adminKey: string;
    let client: { clientId: string; clientSecret: string };

    beforeAll(async () => {
      t = await startTestServer(kind);
      adminKey = await t.addApiKey(['admin']);
      client = await t.addClient({ grants: ['client_credentials'], redirectUris: ['https://rp.example/cb'] });
    });
    afterAll(async () => t?.close());
    afterEach(() => vi.restoreAllMocks());

    const admin = `/admin/v1/identity-providers`;
    const send = async (path: string, init: RequestInit = {}) =>
      answer(await fetch(`${t.baseUrl}${path}`, init));
    const asAdmin = (headers: Record<string, string> = {}) => ({
      authorization: `Bearer ${adminKey}`,
      ...headers,
    });
    const revoke = (headers: Record<string, string> = {}) =>
      send('/oauth/revoke', {
        method: 'POST',
        headers: { ...FORM, ...headers },
        body: new URLSearchParams({
          token: 'x',
          client_id: client.clientId,
          client_secret: client.clientSecret,
        }).toString(),
      });
    const authorize = () =>
      send(
        `/oauth/authorize?${new URLSearchParams({ client_id: client.clientId, response_type: 'code', redirect_uri: 'https://rp.example/cb' })}`,
        { headers: BROWSER },
      );

    describe('an undecodable URL (fastify FST_ERR_BAD_URL)', () => {
      it('is a 400 problem where no route claims the path, with the headers every response carries', async () => {
        const response = await rawGet(t.baseUrl, '/oauth/%E0%A4%A');
        const problem = expectProblem(response, 400, 'invalid_url');
        expect(problem.detail).toBe('the URL is not valid');
        expectBaseHeaders(response);
      });

      it('is a page for a browser where no route claims the path', async () => {
        const response = await rawGet(t.baseUrl, '/oauth/%E0%A4%A', BROWSER);
        expectPage(response, 400, /The URL is not valid\./);
        expectBaseHeaders(response);
      });

      it('is a problem on an admin route, even for a browser', async () => {
        const response = await rawGet(t.baseUrl, `${admin}/%E0%A4%A`, { ...BROWSER, ...asAdmin() });
        expectProblem(response, 400, 'invalid_url');
      });
    });

    describe('a content type no parser takes', () => {
      const xml = { 'content-type': 'application/xml' };
      it('is invalid_request on the token endpoint (RFC 6749 §5.2)', async () => {
        const response = await send('/oauth/token', { method: 'POST', headers: xml, body: '<a/>' });
        expectOAuthError(response, 400, 'invalid_request');
      });

      it('is a 415 problem on the admin API', async () => {
        const response = await send(admin, { method: 'POST', headers: asAdmin(xml), body: '<a/>' });
        expectProblem(response, 415, 'unsupported_media_type');
      });

      it('is a 415 page on the login form', async () => {
        const response = await send('/oauth/login', {
          method: 'POST',
          headers: { ...BROWSER, ...xml },
          body: '<a/>',
        });
        expectPage(response, 415, /The request content type is not accepted here\./);
      });
    });

    describe('a body over the limit', () => {
      it('is a 413 invalid_request on OAuth endpoints', async () => {
        const response = await send('/oauth/token', { method: 'POST', headers: FORM, body: LARGE });
        const body = expectOAuthError(response, 413, 'invalid_request');
        expect(body.error_description).toBe('the request body is too large');
      });

      it('is a 413 problem on the admin API', async () => {
        const response = await send(admin, {
          method: 'POST',
          headers: asAdmin({ 'content-type': 'application/json' }),
          body: JSON.stringify({ x: LARGE }),
        });
        expectProblem(response, 413, 'body_too_large');
      });

      it('is a 413 page on the login form', async () => {
        const response = await send('/oauth/login', {
          method: 'POST',
          headers: { ...BROWSER, ...FORM },
          body: LARGE,
        });
        expectPage(response, 413, /The request body is too large\./);
      });
    });

    describe('a path no route takes (404)', () => {
      it('is a problem for a program', async () => {
        const response = await send('/nope?secret=1');
        const problem = expectProblem(response, 404, 'not_found');
        expect(problem.detail).toBe('no route for GET /nope');
        expectBaseHeaders(response);
      });

      it('is a page for a browser, the path escaped', async () => {
        const response = await send('/oauth/%3Cscript%3E', { headers: BROWSER });
        expectPage(response, 404, /No route for GET \/oauth\/%3Cscript%3E\./);
        expect(response.body).not.toContain('<script>');
      });
    });

    describe('a method the path does not take (405)', () => {
      it('is invalid_request with Allow on the token endpoint', async () => {
        const response = await send('/oauth/token');
        const body = expectOAuthError(response, 405, 'invalid_request');
        expect(body.error_description).toMatch(/^GET is not allowed here; use POST/);
        expect(response.headers.get('allow')?.split(', ')).toContain('POST');
        expect(response.headers.get('allow')?.split(', ')).not.toContain('GET');
      });

      it('is a problem with Allow on the admin API', async () => {
        const response = await send(`${admin}/github`, { method: 'PUT', headers: asAdmin() });
        expectProblem(response, 405, 'method_not_allowed');
        expect(response.headers.get('allow')?.split(', ').sort()).toEqual(['DELETE', 'GET', 'HEAD', 'PATCH']);
      });

      it('is a page with Allow on the authorization endpoint', async () => {
        const response = await send('/oauth/authorize', { method: 'DELETE', headers: BROWSER });
        expectPage(response, 405, /DELETE is not allowed here; use GET/);
        expect(response.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD', 'POST']);
      });
    });

    describe('an error the code did not expect', () => {
      const internal = () =>
        new Error('relation "clients" does not exist: SELECT secret_hash FROM clients WHERE client_id = $1');

      it('is a generic server_error on OAuth endpoints, logged with the request id', async () => {
        vi.spyOn(t.server.services.storage.clients, 'findById').mockRejectedValue(internal());
        const response = await revoke();
        const body = expectOAuthError(response, 500, 'server_error');
        expect(body.error_description).toBe('the server could not answer this request');
        expect(response.body).not.toMatch(/relation|SELECT|secret_hash|at /);
        const id = response.headers.get('x-request-id') as string;
        expect(t.logs.some((line) => line.includes(id) && line.includes('relation \\"clients\\"'))).toBe(
          true,
        );
      });

      it('is a generic internal_error problem on the admin API', async () => {
        vi.spyOn(t.server.services.storage.identityProviders, 'list').mockRejectedValue(internal());
        const response = await send(admin, { headers: asAdmin() });
        const problem = expectProblem(response, 500, 'internal_error');
        expect(problem.detail).toBe('the server could not answer this request');
        expect(response.body).not.toMatch(/relation|SELECT/);
      });

      it('is a generic page on the authorization endpoint', async () => {
        vi.spyOn(t.server.services.storage.clients, 'findById').mockRejectedValue(internal());
        const response = await authorize();
        expectPage(response, 500, /The server could not answer this request\./);
        expect(response.body).not.toMatch(/relation|SELECT/);
      });
    });

    describe('storage that cannot answer', () => {
      const unavailable = () =>
        new StorageUnavailableError('unreachable', {
          cause: new Error('connect ECONNREFUSED 10.1.2.3:5432'),
        });

      it('is a 503 temporarily_unavailable with Retry-After on OAuth endpoints', async () => {
        vi.spyOn(t.server.services.storage.clients, 'findById').mockRejectedValue(unavailable());
        const response = await revoke();
        const body = expectOAuthError(response, 503, 'temporarily_unavailable');
        expect(body.error_description).toBe('the service is unavailable; try again shortly');
        expect(response.headers.get('retry-after')).toBe('5');
        expect(response.body).not.toContain('ECONNREFUSED');
        const id = response.headers.get('x-request-id') as string;
        expect(t.logs.some((line) => line.includes(id) && line.includes('ECONNREFUSED'))).toBe(true);
      });

      it('is a 503 storage_unavailable problem with Retry-After on the admin API', async () => {
        vi.spyOn(t.server.services.storage.identityProviders, 'list').mockRejectedValue(unavailable());
        const response = await send(admin, { headers: asAdmin() });
        expectProblem(response, 503, 'storage_unavailable');
        expect(response.headers.get('retry-after')).toBe('5');
      });

      it('is what a locked database answers, end to end', async () => {
        const locker = new SqliteDatabase(t.database.url.slice('sqlite:'.length));
        const { db } = t.server.services.database;
        await sql`pragma busy_timeout = 50`.execute(db);
        locker.exec('BEGIN EXCLUSIVE');
        try {
          const response = await send(admin, {
            method: 'POST',
            headers: asAdmin({ 'content-type': 'application/json' }),
            body: JSON.stringify({ type: 'github', name: 'gh', clientId: 'Iv1.x', clientSecret: 'plain' }),
          });
          const problem = expectProblem(response, 503, 'storage_unavailable');
          expect(problem.detail).toBe('the service is unavailable; try again shortly');
          expect(response.headers.get('retry-after')).toBe('5');
          expect(response.body).not.toMatch(/SQLITE|locked/);
        } finally {
          locker.exec('ROLLBACK');
          locker.close();
          await sql`pragma busy_timeout = 5000`.execute(db);
        }
      });

      it('is a 503 page with Retry-After on the authorization endpoint', async () => {
        vi.spyOn(t.server.services.storage.clients, 'findById').mockRejectedValue(unavailable());
        const response = await authorize();
        expectPage(response, 503, /The service is unavailable; try again shortly\./);
        expect(response.headers.get('retry-after')).toBe('5');
      });
    });
  },
);

describe('a route that answers programs in JSON and browsers with a page', () => {
  // What the federation callback does: a refusal never reads as idgate's outage, and its format
  // follows the Accept header.
  async function callbackApp() {
    const errors = errorHandling({
      looks: new PageLooks(loadConfig({ env: {} })),
      pageHeaders: pageHeaders('http://idgate.test/oauth'),
      baseHeaders: () => {},
    });
    const app = Fastify({ logger: false, frameworkErrors: errors.frameworkErrors });
    errors.install(app);
    app.get('/oauth/callback/:idp', { config: { errorFormat: ['oauth', 'html'] } }, async () => {
      throw new ConnectorError('upstream_unavailable', 'GitHub did not answer', {
        cause: new Error('connect ETIMEDOUT 140.82.112.3:443'),
      });
    });
    await app.ready();
    return app;
  }

  it('answers a program {error, error_description}, never a 5xx', async () => {
    const app = await callbackApp();
    const response = await app.inject({
      url: '/oauth/callback/github',
      headers: { accept: 'application/json' },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'GitHub did not answer',
    });
    await app.close();
  });

  it('answers a browser with a page saying the same', async () => {
    const app = await callbackApp();
    const response = await app.inject({ url: '/oauth/callback/github', headers: BROWSER });
    expectPage(
      {
        status: response.statusCode,
        headers: new Headers(response.headers as Record<string, string>),
        body: response.body,
      },
      400,
      /GitHub did not answer\./,
    );
    expect(response.body).not.toContain('ETIMEDOUT');
    await app.close();
  });

  it('answers an undecodable callback URL the same way', async () => {
    const app = await callbackApp();
    const program = await app.inject({ url: '/oauth/callback/%E0%A4%A' });
    expect([program.statusCode, program.json().error]).toEqual([400, 'invalid_request']);
    const browser = await app.inject({ url: '/oauth/callback/%E0%A4%A', headers: BROWSER });
    expect([browser.statusCode, browser.headers['content-type']]).toEqual([400, 'text/html; charset=utf-8']);
    await app.close();
  });
});
