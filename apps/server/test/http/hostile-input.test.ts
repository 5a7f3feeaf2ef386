import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { injectOnce, registeredRoutes } from '../helpers/routes.js';

// Every route the server answers, walked from its router (a route added later is covered without
// anyone remembering to add it here), sent malformed, oversized, duplicated, prototype-polluting
// and wrongly encoded input, with and without credentials. Nothing may answer 5xx or show
// internal text (a stack, an exception's name, a file path, SQL).

const PARAM_VALUES = [
  'x',
  '..%2F..%2Fetc%2Fpasswd',
  '%00',
  '%E0%A4%A',
  '__proto__',
  'constructor',
  'a'.repeat(5000),
  '%F0%9F%92%A9',
  'café',
];

const QUERIES = [
  '',
  '?client_id=a&client_id=b&response_type=code&response_type=token',
  '?__proto__[admin]=1&constructor[prototype][admin]=1',
  '?a=%ZZ&interaction=%FF',
  `?q=${'x'.repeat(20_000)}`,
  '?limit=-1&cursor=%00&status=%FF&group=__proto__',
  '?limit=99999999999999999999&cursor=eyJfX3Byb3RvX18iOnt9fQ',
];

const deepJson = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
const BODIES: Array<{ type?: string; body: string | Buffer }> = [
  {
    type: 'application/json',
    body: '{"__proto__":{"admin":true},"constructor":{"prototype":{"admin":true}}}',
  },
  { type: 'application/json', body: '{' },
  { type: 'application/json', body: '[]' },
  { type: 'application/json', body: 'null' },
  { type: 'application/json', body: '"text"' },
  { type: 'application/json', body: deepJson },
  { type: 'application/json', body: '{"name":"a","name":"b","username":"x","username":"y"}' },
  { type: 'application/json', body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]) },
  { type: 'application/json', body: `{"name":"${'n'.repeat(2_000_000)}"}` },
  { type: 'application/json', body: '{"name":{"$ne":null},"groups":[{"x":1}],"password":["a","b"]}' },
  { type: 'application/json; charset=utf-16', body: '{}' },
  { type: 'application/x-www-form-urlencoded', body: 'grant_type=password&grant_type=refresh_token&a=1&a=2' },
  { type: 'application/x-www-form-urlencoded', body: '__proto__[admin]=1&constructor[prototype][admin]=1' },
  { type: 'application/x-www-form-urlencoded', body: 'token=%ZZ&client_id=%FF%FE' },
  {
    type: 'application/x-www-form-urlencoded',
    body: Buffer.from([0x61, 0x3d, 0xff, 0xfe, 0x26, 0x62, 0x3d]),
  },
  { type: 'application/x-www-form-urlencoded', body: `token=${'t'.repeat(2_000_000)}` },
  { type: 'text/plain', body: 'hello' },
  {
    type: 'application/xml',
    body: '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>',
  },
  {
    type: 'multipart/form-data; boundary=zz',
    body: '--zz\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--zz--',
  },
  { body: 'no content type' },
];

const AUTHORIZATIONS = [
  'Bearer',
  'Basic %%%',
  `Basic ${btoa('no-colon')}`,
  `Basic ${btoa(`${'u'.repeat(5000)}:${'p'.repeat(5000)}`)}`,
  `Bearer ${'a'.repeat(10_000)}`,
  'Bearer idg_x_y',
  'Digest username="x"',
];

/** What a response must never show a caller. */
const INTERNAL =
  /\bat [\w.<>]+ \(|TypeError|ReferenceError|RangeError|Cannot read prop|node_modules|\/work\/|file:\/\/\/|SQLITE_|syntax error at or near|relation "|kysely|ECONNREFUSED|"stack"/;

describe.each(testDatabaseUrls())('hostile input on every route, on $name', (kind) => {
  let t: TestApp;
  let adminKey: string;
  let clientAuth: string;
  let routes: Array<[string, string]>;
  const seen = {
    requests: 0,
    fivexx: [] as string[],
    leaks: [] as string[],
    statuses: new Map<number, number>(),
  };

  beforeAll(async () => {
    t = await startTestApp(kind);
    adminKey = await t.addApiKey(['admin', 'tokenreview']);
    await t.addUser('hank', 'battery-staple-5889dc');
    const client = await t.addClient({
      trusted: true,
      grants: ['password', 'refresh_token', 'client_credentials', 'authorization_code'],
      redirectUris: ['https://app.example.test/cb'],
    });
    clientAuth = `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`;
    routes = registeredRoutes(t.app);
  });
  afterAll(async () => t?.close());

  async function send(label: string, options: InjectOptions): Promise<void> {
    const response = await injectOnce(t.app, options);
    seen.requests++;
    seen.statuses.set(response.statusCode, (seen.statuses.get(response.statusCode) ?? 0) + 1);
    if (response.statusCode >= 500)
      seen.fivexx.push(`${label} → ${response.statusCode} ${response.body.slice(0, 200)}`);
    const shown = `${JSON.stringify(response.headers)}\n${response.body}`;
    const leak = INTERNAL.exec(shown);
    if (leak !== null)
      seen.leaks.push(
        `${label} → ${response.statusCode} shows ${JSON.stringify(leak[0])}: ${response.body.slice(0, 200)}`,
      );
  }

  it('finds the routes by walking the router', () => {
    expect(routes.length).toBeGreaterThan(25);
    expect(routes).toContainEqual(['POST', '/oauth/token']);
    expect(routes).toContainEqual(['GET', '/admin/v1/clusters/:name']);
  });

  it('answers no 5xx and shows no internal text, whatever the input', async () => {
    for (const [method, pattern] of routes) {
      const paths = pattern.includes(':')
        ? PARAM_VALUES.map((value) => pattern.replace(/:\w+/g, value))
        : [pattern];
      for (const path of paths) {
        for (const auth of [undefined, `Bearer ${adminKey}`, clientAuth]) {
          const headers = auth === undefined ? {} : { authorization: auth };
          for (const query of QUERIES) {
            await send(`${method} ${path}${query.slice(0, 40)}`, {
              method: method as 'GET',
              url: path + query,
              headers,
            });
          }
          // Each body once per route and credential, on its first path: a hostile parameter value
          // is already sent with every query and credential, and no route reads both at once.
          if (method === 'GET' || method === 'OPTIONS' || path !== paths[0]) continue;
          for (const { type, body } of BODIES) {
            await send(`${method} ${path} ${type ?? '(no type)'} ${String(body).slice(0, 40)}`, {
              method: method as 'POST',
              url: path,
              headers: { ...headers, ...(type === undefined ? {} : { 'content-type': type }) },
              payload: body,
            });
          }
        }
        for (const authorization of AUTHORIZATIONS) {
          await send(`${method} ${path} with ${authorization.slice(0, 20)}`, {
            method: method as 'POST',
            url: path,
            headers: {
              authorization,
              cookie: 'idgate_session=%FF; idgate_ix_x=%00%00; =;;',
              accept: 'text/html',
            },
          });
        }
      }
    }
    expect(seen.fivexx).toEqual([]);
    expect(seen.leaks).toEqual([]);
    // Nothing reached the prototypes of the process's objects.
    expect(Object.keys(Object.prototype)).toEqual([]);
    expect(({} as { admin?: unknown }).admin).toBeUndefined();
    expect(seen.requests).toBeGreaterThan(5000);
    const statuses = [...seen.statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}×${n}`);
    console.info(
      `hostile input on ${kind.name}: ${seen.requests} requests over ${routes.length} routes: ${statuses.join(' ')}`,
    );
  }, 240_000);
});
