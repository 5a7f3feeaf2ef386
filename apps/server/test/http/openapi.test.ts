import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext } from '../../src/cli/context.js';
import { buildProgram } from '../../src/cli/program.js';
import { TOKEN_REVIEW_DEPRECATION } from '../../src/routes/oauth/authenticate.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { type TestDatabaseKind, testDatabaseUrls } from '../helpers/databases.js';
import { registeredRoutes } from '../helpers/routes.js';

// The OpenAPI document is generated from the routes themselves (each route's `config.doc`): these
// tests walk the router so that a route added without a description fails here, and hold the
// document to OpenAPI 3.1 (a schema validator) and to `redocly lint`'s recommended rules.

interface Operation {
  operationId: string;
  deprecated?: boolean;
  security: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string; required: boolean }>;
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<
    string,
    { headers?: Record<string, unknown>; content?: Record<string, { schema: Record<string, unknown> }> }
  >;
}
interface Document {
  openapi: string;
  info: { version: string; license: { name: string } };
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, { type: string }> };
}

const SERVER_DIR = new URL('../../', import.meta.url).pathname;
const VERSION = (JSON.parse(readFileSync(join(SERVER_DIR, 'package.json'), 'utf8')) as { version: string })
  .version;
const run = promisify(execFile);

const operations = (document: Document): Array<[string, string, Operation]> =>
  Object.entries(document.paths).flatMap(([path, byMethod]) =>
    Object.entries(byMethod).map(([method, operation]): [string, string, Operation] => [
      method.toUpperCase(),
      path,
      operation,
    ]),
  );

describe('the OpenAPI document', () => {
  let t: TestApp;
  let text: string;
  let document: Document;

  beforeAll(async () => {
    t = await startTestApp(testDatabaseUrls()[0] as TestDatabaseKind);
    const response = await t.fetch(`${t.baseUrl}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    text = await response.text();
    document = JSON.parse(text) as Document;
  });
  afterAll(async () => t?.close());

  it('is OpenAPI 3.1.0 of this server, built once', async () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe(VERSION);
    expect(document.info.license.name).toBe('Apache-2.0');
    expect(document.servers).toEqual([expect.objectContaining({ url: t.baseUrl })]);
    expect(await (await t.fetch(`${t.baseUrl}/openapi.json`)).text()).toBe(text);
  });

  it('documents every route the server answers, and only those', () => {
    const routed = registeredRoutes(t.app).map(
      ([method, path]) => `${method} ${path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`,
    );
    const documented = operations(document).map(([method, path]) => `${method} ${path}`);
    expect(routed.length).toBeGreaterThan(30);
    expect(documented.sort()).toEqual([...new Set(routed)].sort());
  });

  it('names every operation once', () => {
    const ids = operations(document).map(([, , operation]) => operation.operationId);
    expect(ids.every((id) => /^[a-z][A-Za-z0-9]*$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('validates as OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(text) as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(validator.version).toBe('3.1');
    expect(result.valid).toBe(true);
  });

  it('passes redocly lint (recommended rules) without an error or a warning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'idgate-openapi-'));
    writeFileSync(join(dir, 'openapi.json'), text);
    copyFileSync(join(SERVER_DIR, 'redocly.yaml'), join(dir, 'redocly.yaml'));
    copyFileSync(join(SERVER_DIR, '.redocly.lint-ignore.yaml'), join(dir, '.redocly.lint-ignore.yaml'));
    const { stdout } = await run(
      'pnpm',
      [
        'exec',
        'redocly',
        'lint',
        '--config',
        join(dir, 'redocly.yaml'),
        join(dir, 'openapi.json'),
        '--format=json',
      ],
      {
        cwd: SERVER_DIR,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? String(error) }));
    const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as {
      totals: { errors: number; warnings: number };
      problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }>;
    };
    expect(report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);

  it('describes request and response bodies with the zod schemas the routes use', () => {
    const token = document.paths['/oauth/token']?.post as Operation;
    expect(Object.keys(token.requestBody?.content ?? {})).toEqual(['application/x-www-form-urlencoded']);
    expect(token.security).toEqual([{ clientSecretBasic: [] }, { clientSecretPost: [] }, {}]);
    expect(token.responses['200']?.content?.['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/TokenResponse',
    });
    const invalidGrant = token.responses['400']?.content?.['application/json']?.schema as {
      allOf: Array<{ $ref?: string; properties?: { error: { enum: string[] } } }>;
    };
    expect(invalidGrant.allOf[0]).toEqual({ $ref: '#/components/schemas/OAuthError' });
    expect(invalidGrant.allOf[1]?.properties?.error.enum).toEqual(
      expect.arrayContaining(['invalid_grant', 'authorization_pending', 'invalid_request']),
    );

    const create = document.paths['/admin/v1/clusters']?.post as Operation;
    expect(create.security).toEqual([{ adminApiKey: ['clusters:write'] }]);
    expect(Object.keys(create.responses)).toEqual(['201', '400', '401', '403', '409', '413', '415', '503']);
    const problem = create.responses['401']?.content?.['application/problem+json']?.schema as {
      allOf: Array<{ $ref?: string; properties?: { code: { enum: string[] } } }>;
    };
    expect(problem.allOf[0]).toEqual({ $ref: '#/components/schemas/Problem' });
    expect(problem.allOf[1]?.properties?.code.enum).toEqual(['api_key_missing', 'api_key_invalid']);
    expect(create.responses['400']?.content?.['application/problem+json']?.schema).toMatchObject({
      allOf: [{}, { properties: { code: { enum: ['invalid_cluster', 'invalid_url', 'invalid_body'] } } }],
    });
    expect(create.responses['201']?.headers).toHaveProperty('Location');
    expect(document.paths['/admin/v1/clusters/{name}']?.get?.parameters).toEqual([
      expect.objectContaining({ name: 'name', in: 'path', required: true }),
    ]);

    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining([
        'Problem',
        'OAuthError',
        'TokenResponse',
        'ProviderMetadata',
        'Jwks',
        'Cluster',
      ]),
    );
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual([
      'accessToken',
      'adminApiKey',
      'browserSession',
      'clientSecretBasic',
      'clientSecretPost',
      'tokenReviewApiKey',
    ]);
    expect(document.components.securitySchemes.browserSession).toMatchObject({
      type: 'apiKey',
      in: 'cookie',
      name: 'idgate_session',
    });
  });

  it('describes itself as an OpenAPI 3.1 document, an object', () => {
    const self = document.paths['/openapi.json']?.get as Operation;
    expect(self.responses['200']?.content?.['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/OpenApiDocument',
    });
    expect(document.components.schemas.OpenApiDocument).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['openapi', 'info', 'paths']),
      properties: { openapi: { type: 'string' }, info: { type: 'object' }, paths: { type: 'object' } },
    });
  });

  it('names only CLI commands that exist', () => {
    const program = buildProgram(
      createContext({ stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: {} }),
    );
    const named = [...text.matchAll(/`idgate ([a-z][a-z-]*(?: [a-z][a-z-]*)*)/g)].map(
      (match) => match[1] as string,
    );
    expect(named.length).toBeGreaterThan(0);
    const unknown = named.filter((words) => !namesCommand(program, words.split(' ')));
    expect(unknown.map((words) => `idgate ${words}`)).toEqual([]);
  });

  describe('the deprecated TokenReview operation', () => {
    const review = {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: 'not-a-token' },
    };
    const linkOf = (issuer: string) =>
      `<${issuer}/.well-known/openid-configuration>; rel="alternate"; type="application/json", <${issuer.slice(0, -'/oauth'.length)}/openapi.json>; rel="deprecation"; type="application/json"`;

    it('is marked deprecated, and documents Deprecation and Link on every answer', () => {
      const operation = document.paths['/oauth/authenticate']?.post as Operation;
      expect(operation.deprecated).toBe(true);
      expect(operation.security).toEqual([{ tokenReviewApiKey: ['tokenreview'] }]);
      for (const [status, response] of Object.entries(operation.responses)) {
        expect(Object.keys(response.headers ?? {}), status).toEqual(
          expect.arrayContaining(['Deprecation', 'Link']),
        );
      }
    });

    it.each([
      ['a review', true, 'application/json', 200],
      ['no API key', false, 'application/json', 401],
      ['not JSON', true, 'text/plain', 415],
    ] as const)('sends Deprecation and Link headers on %s', async (_label, withKey, type, status) => {
      const key = await t.addApiKey(['tokenreview']);
      const response = await t.fetch(`${t.issuer}/authenticate`, {
        method: 'POST',
        headers: { 'content-type': type, ...(withKey ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify(review),
      });
      expect(response.status).toBe(status);
      expect(response.headers.get('deprecation')).toBe(TOKEN_REVIEW_DEPRECATION);
      expect(response.headers.get('link')).toBe(linkOf(t.issuer));
      if (status === 200) expect(await response.json()).toMatchObject({ status: { authenticated: false } });
    });
  });
});

/**
 * Whether `words` start with a command of the program: each word names a subcommand while the
 * command it reaches has subcommands; the words after a leaf command are its arguments.
 */
function namesCommand(program: Command, words: readonly string[]): boolean {
  let command = program;
  for (const word of words) {
    if (command.commands.length === 0) return true;
    const next = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (next === undefined) return false;
    command = next;
  }
  return command !== program;
}
