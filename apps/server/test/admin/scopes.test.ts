import {
  AdminApiScope,
  API_KEY_ROLES,
  type ApiKeyRole,
  ApiKeyScope,
  ApiKeyRole as Roles,
} from '@idgate/schema';
import { createIdgateAdminClient, type IdgateAdminClient } from '@idgate/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testClock } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { readDoc } from '../helpers/docs.js';
import { httpError } from '../helpers/http-error.js';
import { registerSecret } from '../helpers/run-record.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// API key scopes over real HTTP: every admin operation, walked from the OpenAPI document (which
// test/http/openapi.test.ts holds to the router), is refused with 403 naming its scope to a key
// without it and let through to a key holding only it; each role does what the scope and role
// tables of docs/admin/rest-api.md say; no key makes a key stronger than itself; a key's name and
// expiry change, audited and in force at once.

/** One admin operation as the OpenAPI document describes it. */
interface AdminOperation {
  readonly operationId: string;
  readonly method: string;
  /** Its path with every parameter filled with a name nothing has. */
  readonly url: string;
  readonly scope: string;
  readonly body: boolean;
}

interface OpenApiOperation {
  operationId: string;
  security: Array<Record<string, string[]>>;
  requestBody?: { content: Record<string, unknown> };
}

/** What a request answered: its status, its problem (or text), its challenge. */
interface Answer {
  readonly status: number;
  readonly problem: Record<string, unknown> | undefined;
  readonly challenge: string | null;
}

const REST_API = readDoc('docs/admin/rest-api.md');

/** The rows of the Markdown table whose header row is `header`: its cells, trimmed. */
function tableRows(header: string): string[][] {
  const lines = REST_API.split('\n');
  const start = lines.indexOf(header);
  expect(start, `docs/admin/rest-api.md has a table headed ${header}`).toBeGreaterThan(-1);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** The `code` words of a cell, leaving out what a parenthesis says of them. */
const codeWords = (cell: string): string[] =>
  [...cell.replace(/\([^)]*\)/g, '').matchAll(/`([^`]+)`/g)].map((match) => match[1] as string);

/** Scope → the operations the docs' scope table gives it. */
const DOCUMENTED_SCOPES = new Map(
  tableRows('| Scope | Operations |').map(([scope, operations]) => [
    codeWords(scope ?? '')[0] as string,
    codeWords(operations ?? '').sort(),
  ]),
);

/** Role → the scopes the docs' role table gives it. */
const DOCUMENTED_ROLES = new Map(
  tableRows('| Role | Scopes | For |').map(([role, scopes]) => [
    codeWords(role ?? '')[0] as string,
    codeWords(scopes ?? ''),
  ]),
);

describe.each(testDatabaseUrls())('API key scopes over HTTP on $name', (kind) => {
  let t: TestServer;
  let adminKey: string;
  let admin: IdgateAdminClient;
  let operations: AdminOperation[];
  const clock = testClock();

  const clientFor = (apiKey: string) => createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey });

  /** Sends `operation` with `key`: an empty JSON object as its body, if it takes one. */
  async function call(key: string, operation: AdminOperation): Promise<Answer> {
    const response = await fetch(`${t.baseUrl}${operation.url}`, {
      method: operation.method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(operation.body ? { 'content-type': 'application/json' } : {}),
      },
      ...(operation.body ? { body: '{}' } : {}),
    });
    const type = response.headers.get('content-type') ?? '';
    let problem: Record<string, unknown> | undefined;
    // A live tail (followEvents) does not end: its headers are the answer.
    if (type.startsWith('text/event-stream')) await response.body?.cancel();
    else if (type.startsWith('application/problem+json'))
      problem = (await response.json()) as Record<string, unknown>;
    else await response.arrayBuffer();
    return { status: response.status, problem, challenge: response.headers.get('www-authenticate') };
  }

  /** A refusal of `answer` that is not the 403 naming `scope`, in words, or undefined. */
  function notRefusedFor(scope: string, answer: Answer): string | undefined {
    const refused =
      answer.status === 403 &&
      answer.problem?.code === 'api_key_scope' &&
      answer.problem?.scope === scope &&
      answer.problem?.detail === `the API key lacks the "${scope}" scope` &&
      answer.challenge === `Bearer realm="idgate", error="insufficient_scope", scope="${scope}"`;
    return refused
      ? undefined
      : `${answer.status} ${JSON.stringify(answer.problem)} ${answer.challenge ?? '(no challenge)'}`;
  }

  /** Whether `answer` let the request through: anything but a refused key or a server error. */
  const through = (answer: Answer) => answer.status !== 401 && answer.status !== 403 && answer.status < 500;

  const addKey = async (scopes: ApiKeyScope[]) => t.addApiKey(scopes);

  beforeAll(async () => {
    t = await startTestServer(kind, {}, { clock });
    adminKey = await t.addApiKey(['admin']);
    admin = clientFor(adminKey);
    const document = (await (await fetch(`${t.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, OpenApiOperation>>;
    };
    operations = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/admin/'))
      .flatMap(([path, byMethod]) =>
        Object.entries(byMethod).map(([method, operation]) => {
          const requirement = operation.security[0]?.adminApiKey;
          expect(operation.security, operation.operationId).toEqual([{ adminApiKey: [requirement?.[0]] }]);
          return {
            operationId: operation.operationId,
            method: method.toUpperCase(),
            url: path.replace(/\{[^}]+\}/g, 'nobody'),
            scope: requirement?.[0] as string,
            body: operation.requestBody?.content['application/json'] !== undefined,
          };
        }),
      );
  });
  afterAll(async () => t?.close());

  it('declares one scope of the admin API for every admin operation, as the docs’ scope table says', () => {
    expect(operations.length).toBeGreaterThan(45);
    for (const { operationId, scope } of operations)
      expect(AdminApiScope.options, operationId).toContain(scope);
    const declared = new Map<string, string[]>();
    for (const { operationId, scope } of operations)
      declared.set(scope, [...(declared.get(scope) ?? []), operationId]);
    for (const [scope, ids] of declared) declared.set(scope, ids.sort());
    expect(Object.fromEntries(DOCUMENTED_SCOPES)).toEqual(Object.fromEntries(declared));
    // Every scope of the admin API is one some operation needs.
    expect([...DOCUMENTED_SCOPES.keys()].sort()).toEqual([...AdminApiScope.options].sort());
    expect(Object.fromEntries(DOCUMENTED_ROLES)).toEqual(API_KEY_ROLES);
  });

  it('puts incident response behind scopes of its own that no role but admin holds', () => {
    const scopeOf = new Map(operations.map((operation) => [operation.operationId, operation.scope]));
    expect({
      retireSigningKey: scopeOf.get('retireSigningKey'),
      setNotBefore: scopeOf.get('setNotBefore'),
      listNotBefore: scopeOf.get('listNotBefore'),
      listClientGrants: scopeOf.get('listClientGrants'),
      revokeClientGrants: scopeOf.get('revokeClientGrants'),
      revokeClientSessions: scopeOf.get('revokeClientSessions'),
      listBlockedAddresses: scopeOf.get('listBlockedAddresses'),
      liftAddressBlocks: scopeOf.get('liftAddressBlocks'),
    }).toEqual({
      retireSigningKey: 'keys:retire',
      setNotBefore: 'sessions:revoke-all',
      listNotBefore: 'sessions:read',
      listClientGrants: 'sessions:read',
      revokeClientGrants: 'sessions:write',
      revokeClientSessions: 'sessions:write',
      listBlockedAddresses: 'users:read',
      liftAddressBlocks: 'users:unlock',
    });
    for (const role of Roles.options.filter((r) => r !== 'admin'))
      for (const scope of ['keys:retire', 'sessions:revoke-all'] as const)
        expect(API_KEY_ROLES[role], `${role} holds ${scope}`).not.toContain(scope);
  });

  it('refuses every admin operation to a key without its scope, 403 naming it, and lets a key of that scope alone through', async () => {
    const lacking = new Map<string, string>();
    const only = new Map<string, string>();
    for (const scope of AdminApiScope.options) {
      lacking.set(scope, await addKey(AdminApiScope.options.filter((other) => other !== scope)));
      only.set(scope, await addKey([scope]));
    }
    const reviewer = await addKey(['tokenreview']);
    const wrong: string[] = [];
    for (const operation of operations) {
      const label = `${operation.method} ${operation.url} (${operation.operationId}, ${operation.scope})`;
      for (const [who, key] of [
        ['every other scope', lacking.get(operation.scope) as string],
        ['tokenreview', reviewer],
      ] as const) {
        const refusal = notRefusedFor(operation.scope, await call(key, operation));
        if (refusal !== undefined) wrong.push(`${label} with ${who}: ${refusal}`);
      }
      for (const [who, key] of [
        ['its scope alone', only.get(operation.scope) as string],
        ['admin', adminKey],
      ] as const) {
        const answer = await call(key, operation);
        if (!through(answer))
          wrong.push(`${label} with ${who}: ${answer.status} ${JSON.stringify(answer.problem)}`);
      }
    }
    expect(wrong).toEqual([]);
  }, 120_000);

  it('gives each role what the docs’ role table says, and nothing else', async () => {
    const wrong: string[] = [];
    for (const role of Roles.options) {
      const created = await admin.createApiKey({ name: `role-${role}`, roles: [role] });
      registerSecret('API key', created.key);
      const scopes = DOCUMENTED_ROLES.get(role) as string[];
      expect(created.scopes, role).toEqual(ApiKeyScope.options.filter((scope) => scopes.includes(scope)));
      for (const operation of operations) {
        const allowed = scopes.includes(operation.scope) || scopes.includes('admin');
        const answer = await call(created.key, operation);
        const refusal = notRefusedFor(operation.scope, answer);
        if (allowed ? !through(answer) : refusal !== undefined)
          wrong.push(
            `${role} ${allowed ? 'refused' : 'let through'}: ${operation.operationId} → ${answer.status} ${refusal ?? ''}`,
          );
      }
    }
    expect(wrong).toEqual([]);
  }, 120_000);

  it('lets no key make a key with a scope it lacks, or keep a stronger key working longer', async () => {
    const creatorKey = await addKey(['api-keys:read', 'api-keys:write', 'users:read', 'sessions:read']);
    const creator = clientFor(creatorKey);
    const before = (await admin.listApiKeys({ limit: 500 })).items.length;
    const refusals: Array<[{ scopes?: ApiKeyScope[]; roles?: ApiKeyRole[] }, string]> = [
      [{ scopes: ['users:read', 'users:write'] }, 'users:write'],
      [{ roles: ['helpdesk'] }, 'users:unlock'],
      [{ roles: ['auditor'] }, 'clients:read'],
      [{ roles: ['admin'] }, 'admin'],
      [{ scopes: ['tokenreview'] }, 'tokenreview'],
    ];
    for (const [input, scope] of refusals) {
      const refused = await httpError(creator.createApiKey({ name: 'stronger', ...input }));
      expect([refused.status, refused.problem]).toEqual([
        403,
        expect.objectContaining({
          code: 'api_key_scope',
          scope,
          detail: `the API key lacks the "${scope}" scope, which the new key would have`,
        }),
      ]);
    }
    expect((await admin.listApiKeys({ limit: 500 })).items).toHaveLength(before);

    // A key of scopes the creator holds is made, and has those scopes only.
    const reader = await creator.createApiKey({ name: 'reader', scopes: ['users:read'] });
    registerSecret('API key', reader.key);
    expect(reader.scopes).toEqual(['users:read']);
    expect((await clientFor(reader.key).listUsers()).items).toEqual([]);
    const refused = await httpError(clientFor(reader.key).getApiKey(reader.id));
    expect([refused.status, refused.problem?.scope]).toEqual([403, 'api-keys:read']);

    // admin holds every scope of the admin API, not tokenreview.
    expect((await admin.createApiKey({ name: 'ops', roles: ['operator'] })).scopes).toEqual(
      API_KEY_ROLES.operator,
    );
    const review = await httpError(admin.createApiKey({ name: 'apiserver', scopes: ['tokenreview'] }));
    expect([review.status, review.problem?.scope]).toEqual([403, 'tokenreview']);

    // Shortening a stronger key's life is allowed; lengthening it is not.
    const ops = await admin.createApiKey({ name: 'ops-expiring', roles: ['operator'], expiresIn: 3600 });
    registerSecret('API key', ops.key);
    const shorter = await creator.updateApiKey(ops.id, { expiresIn: 600 });
    expect(Date.parse(shorter.expiresAt as string)).toBeLessThan(Date.parse(ops.expiresAt as string));
    for (const longer of [{ expiresIn: 7200 }, { expiresAt: null }]) {
      const refusedLonger = await httpError(creator.updateApiKey(ops.id, longer));
      expect([refusedLonger.status, refusedLonger.problem]).toEqual([
        403,
        expect.objectContaining({
          scope: 'clients:read',
          detail:
            'the API key lacks the "clients:read" scope, which the key it would keep working longer has',
        }),
      ]);
    }
    expect((await admin.getApiKey(ops.id)).expiresAt).toBe(shorter.expiresAt);
  });

  it('audits a live key refused for want of a scope, naming the scope and the route; an unknown key, not', async () => {
    const created = await admin.createApiKey({ name: 'reader', scopes: ['clients:read'] });
    registerSecret('API key', created.key);
    const reader = clientFor(created.key);
    const refused = await httpError(reader.createUser({ username: 'mallory' }));
    expect([refused.status, refused.problem?.scope]).toEqual([403, 'users:write']);
    // Known from memory now: refused and recorded again, without a storage read of the key.
    expect((await httpError(reader.listUsers())).status).toBe(403);
    const review = await fetch(`${t.baseUrl}/oauth/authenticate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${created.key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(review.status).toBe(403);

    const items = [];
    for await (const event of admin.eachEvent({ type: ['api-key.denied'] })) items.push(event);
    // One instant of the test clock: in any order.
    const denied = items.filter((event) => event.actor.id === created.id);
    expect(denied).toHaveLength(3);
    expect(denied.map((event) => [event.actor, event.outcome, event.details])).toEqual(
      expect.arrayContaining([
        [
          { kind: 'api-key', id: created.id, name: created.prefix },
          'failure',
          { scope: 'users:write', operation: 'POST /admin/v1/users' },
        ],
        [
          { kind: 'api-key', id: created.id, name: created.prefix },
          'failure',
          { scope: 'users:read', operation: 'GET /admin/v1/users' },
        ],
        [
          { kind: 'api-key', id: created.id, name: created.prefix },
          'failure',
          { scope: 'tokenreview', operation: 'POST /oauth/authenticate' },
        ],
      ]),
    );
    expect(denied[0]?.address).toBe('127.0.0.1');
    // An unknown key's request records nothing.
    const unknown = await fetch(`${t.baseUrl}/admin/v1/trusts`, {
      headers: { authorization: `Bearer idg_aaaaaaaa_${'a'.repeat(43)}` },
    });
    expect(unknown.status).toBe(401);
    let after = 0;
    for await (const _ of admin.eachEvent({ type: ['api-key.denied'] })) after++;
    expect(after).toBe(items.length);
  });

  it('renames a key and changes its expiry, audited with the acting key and in force at once; an expired key is refused', async () => {
    const created = await admin.createApiKey({ name: 'ci', scopes: ['clients:read'], expiresIn: 3600 });
    registerSecret('API key', created.key);
    const ci = clientFor(created.key);
    // Used once: the server now knows the key from memory, with its first expiry.
    await ci.listClients();

    const renamed = await admin.updateApiKey(created.prefix, { name: 'ci (2026)', expiresIn: 60 });
    expect(renamed).toMatchObject({ id: created.id, name: 'ci (2026)', scopes: ['clients:read'] });
    expect(Date.parse(renamed.expiresAt as string) - clock.now()).toBeLessThanOrEqual(60_000);
    expect(await admin.getApiKey(created.id)).toEqual(renamed);
    expect(await admin.getApiKey(created.prefix)).toEqual(renamed);
    await ci.listClients();

    clock.advance(61_000);
    const expired = await httpError(ci.listClients());
    expect([expired.status, expired.problem?.code]).toEqual([401, 'api_key_invalid']);

    // An expired key brought back by a later expiry works again.
    const back = await admin.updateApiKey(created.id, {
      expiresAt: new Date(clock.now() + 86_400_000).toISOString(),
    });
    expect((await ci.listClients()).items).toEqual([]);
    const never = await admin.updateApiKey(created.id, { expiresAt: null });
    expect(never.expiresAt).toBeNull();

    const { items } = await admin.listEvents({ type: ['admin.changed'], limit: 500 });
    const changes = items.flatMap((event) =>
      event.type === 'admin.changed' &&
      event.details.objectId === created.id &&
      event.details.action === 'updated'
        ? [[event.actor, event.details.before, event.details.after]]
        : [],
    );
    expect(changes).toEqual([
      [
        { kind: 'api-key', id: expect.any(String), name: adminKey.slice(0, 12) },
        { name: 'ci', expiresAt: created.expiresAt },
        { name: 'ci (2026)', expiresAt: renamed.expiresAt },
      ],
      [
        expect.objectContaining({ kind: 'api-key' }),
        { expiresAt: renamed.expiresAt },
        { expiresAt: back.expiresAt },
      ],
      [expect.objectContaining({ kind: 'api-key' }), { expiresAt: back.expiresAt }, { expiresAt: null }],
    ]);

    for (const [patch, detail] of [
      [{ expiresIn: 0 }, /^expiresIn 0: /],
      [{ expiresIn: 60, expiresAt: null }, /^expiresAt: give expiresIn or expiresAt, not both$/],
      [
        { expiresAt: new Date(clock.now() - 1000).toISOString() },
        /: must be later than now and at most ten years ahead$/,
      ],
      [{ scopes: ['admin'] }, /^body: unknown field scopes$/],
      [{ name: ' ' }, /^name: must not be empty$/],
    ] as const) {
      const bad = await httpError(admin.updateApiKey(created.id, patch as never));
      expect([bad.status, bad.problem?.code, bad.problem?.detail], JSON.stringify(patch)).toEqual([
        400,
        'invalid_api_key',
        expect.stringMatching(detail),
      ]);
    }

    await admin.revokeApiKey(created.id);
    const revoked = await httpError(admin.updateApiKey(created.id, { name: 'again' }));
    expect([revoked.status, revoked.problem?.code]).toEqual([404, 'api_key_not_found']);
    expect(await admin.getApiKey(created.id)).toMatchObject({
      name: 'ci (2026)',
      revokedAt: expect.any(String),
    });
    expect((await httpError(admin.getApiKey('idg_zzzzzzzz'))).problem?.code).toBe('api_key_not_found');
  });
});
