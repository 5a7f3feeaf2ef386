import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createIdgateAdminClient, IdgateHttpError, IdgateSchemaError, IdgateSdkError } from '../src/index.js';

interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}
let server: Server;
let baseUrl: string;
let requests: Recorded[] = [];
let replies: Array<{ status?: number; json?: unknown; type?: string }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const reply = replies.shift() ?? { status: 404 };
      res.writeHead(
        reply.status ?? 200,
        reply.json === undefined ? {} : { 'content-type': reply.type ?? 'application/json' },
      );
      res.end(reply.json === undefined ? '' : JSON.stringify(reply.json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  requests = [];
  replies = [];
});

async function failure<T extends Error>(promise: Promise<unknown>, type: new (...args: never[]) => T) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(type);
  return error as T;
}

const cluster = {
  name: 'prod',
  audience: 'kubernetes:prod',
  requireMfa: false,
  kubectlClientId: 'cl_abc',
  createdAt: '2026-01-01T00:00:00.000Z',
};
const admin = () => createIdgateAdminClient({ baseUrl, apiKey: 'idg_admin_key' });

describe('cluster admin API', () => {
  it('refuses a name that is not a cluster name, before sending', async () => {
    for (const name of ['../users', 'a_b', '']) {
      const error = await failure(admin().getCluster(name), IdgateSdkError);
      expect(error.message).toMatch(/^name must be a cluster name/);
    }
    expect(requests).toHaveLength(0);
  });

  it('creates a cluster as JSON once (no retry) and answers its key', async () => {
    const created = { cluster, apiKey: 'idg_ab12cd34_secret', apiKeyId: 'k1', kubectlClientCreated: true };
    replies = [{ status: 201, json: created }];
    expect(
      await createIdgateAdminClient({ baseUrl, apiKey: 'idg_admin_key', retry: 2 }).createCluster({
        name: 'prod',
      }),
    ).toEqual(created);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      method: 'POST',
      path: '/admin/v1/clusters',
      body: '{"name":"prod"}',
      headers: { authorization: 'Bearer idg_admin_key', 'content-type': 'application/json' },
    });
  });

  it('lists, gets and deletes, validating answers and mapping problems', async () => {
    replies = [
      { json: { items: [cluster] } },
      { json: cluster },
      { status: 204 },
      {
        status: 404,
        json: {
          type: 'about:blank',
          title: 'Not Found',
          status: 404,
          code: 'cluster_not_found',
          detail: 'there is no cluster nope',
        },
        type: 'application/problem+json',
      },
      { json: { items: [{ ...cluster, audience: 7 }] } },
    ];
    expect(await admin().listClusters()).toEqual({ items: [cluster] });
    expect(await admin().getCluster('PROD')).toEqual(cluster);
    await admin().deleteCluster('prod');
    const missing = await failure(admin().getCluster('nope'), IdgateHttpError);
    expect(missing.status).toBe(404);
    expect(missing.problem?.code).toBe('cluster_not_found');
    const bad = await failure(admin().listClusters(), IdgateSchemaError);
    expect(bad.message).toContain('items.0.audience');
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /admin/v1/clusters',
      'GET /admin/v1/clusters/prod',
      'DELETE /admin/v1/clusters/prod',
      'GET /admin/v1/clusters/nope',
      'GET /admin/v1/clusters',
    ]);
  });
});
