import { Validator } from '@seriousme/openapi-schema-validator';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openapiDocument, openapiPath, RouteCatalog } from '../../src/openapi/document.js';
import type { RouteDoc } from '../../src/openapi/route-doc.js';

// The generator on its own, over route descriptions of the kinds the admin routes write: zod
// schemas with transforms, pipes, defaults, preprocessing, dates, and parts named by `.meta({ id })`.

const Widget = z
  .object({
    name: z.string().trim().toLowerCase().meta({ description: 'the name, in lower case' }),
    size: z.preprocess((value) => (typeof value === 'string' ? Number(value) : value), z.int().min(1)),
    createdAt: z.date().transform((date) => date.toISOString()),
    tags: z
      .array(z.string())
      .transform((tags) => [...new Set(tags)])
      .default([]),
  })
  .meta({ id: 'GeneratorTestWidget' });
const Owner = z.object({ username: z.string() }).meta({ id: 'GeneratorTestOwner' });
const WidgetView = z.object({ widget: Widget, owner: Owner, etag: z.string() });

/** The document, walked by the paths the test knows are there. */
// biome-ignore lint/suspicious/noExplicitAny: JSON walked by known paths; a wrong path fails the assertion
type Tree = any;

// Paging as the admin listings take it (`?limit&cursor` → `{ items, nextCursor }`).
const PageQuery = z.object({
  limit: z
    .string()
    .regex(/^[0-9]{1,4}$/)
    .transform(Number)
    .pipe(z.int().min(1).max(500))
    .default(100),
  cursor: z.string().min(1).max(512).optional(),
});
const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), nextCursor: z.string().nullable() });

const OPTIONS = { root: 'https://id.example.com', issuer: 'https://id.example.com/oauth', version: '1.2.3' };

async function documentOf(
  routes: Array<[method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, doc: RouteDoc | undefined]>,
) {
  const app = Fastify();
  const catalog = new RouteCatalog();
  app.addHook('onRoute', catalog.record);
  await app.register(async (scope) => {
    for (const [method, url, doc] of routes)
      scope.route({
        method,
        url,
        ...(doc === undefined ? {} : { config: { doc } }),
        handler: async () => ({}),
      });
  });
  await app.ready();
  return { document: openapiDocument(catalog.routes, OPTIONS) as Tree, catalog };
}

describe('the OpenAPI generator', () => {
  it('writes paths in OpenAPI form', () => {
    expect(openapiPath('/admin/v1/users/:username/groups/:group')).toBe(
      '/admin/v1/users/{username}/groups/{group}',
    );
  });

  it('turns transforming schemas into their input and output sides, naming registered parts once', async () => {
    const { document, catalog } = await documentOf([
      [
        'GET',
        '/admin/v1/widgets',
        {
          operationId: 'listWidgets',
          summary: 'Widgets',
          tags: ['widgets'],
          security: ['adminApiKey'],
          query: PageQuery,
          responses: { 200: { description: 'a page', json: pageOf(WidgetView) } },
        },
      ],
      [
        'PATCH',
        '/admin/v1/widgets/:name',
        {
          operationId: 'updateWidget',
          summary: 'Change a widget',
          tags: ['widgets'],
          security: ['adminApiKey'],
          headers: z.object({ 'If-Match': z.string().optional().describe('the ETag the change is for') }),
          body: { json: z.object({ widget: Widget, owner: Owner }) },
          responses: {
            200: { description: 'the widget', json: WidgetView, headers: { ETag: 'its version' } },
            412: { description: 'the ETag is stale', problem: ['precondition_failed'] },
          },
        },
      ],
      ['DELETE', '/admin/v1/widgets/:name', undefined],
    ]);
    // HEAD routes are not recorded; an undescribed route is, and stays out of the document.
    expect(catalog.routes.map((r) => `${r.method} ${r.path} ${r.doc === undefined ? '-' : 'doc'}`)).toEqual([
      'GET /admin/v1/widgets doc',
      'PATCH /admin/v1/widgets/{name} doc',
      'DELETE /admin/v1/widgets/{name} -',
    ]);
    expect(Object.keys(document.paths['/admin/v1/widgets/{name}'])).toEqual(['patch']);

    const list = document.paths['/admin/v1/widgets'].get;
    expect(list.parameters).toEqual([
      expect.objectContaining({
        name: 'limit',
        in: 'query',
        required: false,
        schema: expect.objectContaining({ type: 'string' }),
      }),
      expect.objectContaining({ name: 'cursor', in: 'query', required: false }),
    ]);
    const schemas = document.components.schemas;
    // A named part goes under its name (output side) and, where its input side differs (a
    // transform, or an object that does not refuse unknown keys on the way in), `<name>Input`.
    expect(Object.keys(schemas).filter((name) => name.startsWith('GeneratorTest'))).toEqual([
      'GeneratorTestOwner',
      'GeneratorTestOwnerInput',
      'GeneratorTestWidget',
      'GeneratorTestWidgetInput',
    ]);
    // What JSON Schema cannot say (a date, a transform's result) is left open, not refused.
    expect(schemas.GeneratorTestWidget.properties.createdAt).toEqual({});
    expect(schemas.GeneratorTestWidget.required).toContain('tags');
    expect(schemas.GeneratorTestWidgetInput.properties.name).toMatchObject({
      description: 'the name, in lower case',
    });
    expect(schemas.GeneratorTestWidgetInput.required).not.toContain('tags');

    const update = document.paths['/admin/v1/widgets/{name}'].patch;
    expect(update.parameters).toEqual([
      { name: 'name', in: 'path', required: true, schema: { type: 'string' } },
      {
        name: 'If-Match',
        in: 'header',
        required: false,
        description: 'the ETag the change is for',
        schema: { type: 'string' },
      },
    ]);
    const body = update.requestBody.content['application/json'].schema;
    expect(body.properties).toEqual({
      widget: { $ref: '#/components/schemas/GeneratorTestWidgetInput' },
      owner: { $ref: '#/components/schemas/GeneratorTestOwnerInput' },
    });
    expect(update.responses['200'].content['application/json'].schema.properties.widget).toEqual({
      $ref: '#/components/schemas/GeneratorTestWidget',
    });
    // What the admin kind adds: API key refusals, storage, and the body's refusals.
    expect(Object.keys(update.responses)).toEqual([
      '200',
      '400',
      '401',
      '403',
      '412',
      '413',
      '414',
      '415',
      '503',
    ]);

    const validator = new Validator();
    const result = await validator.validate(JSON.parse(JSON.stringify(document)));
    expect(result.errors).toBeUndefined();
  });

  it('refuses two routes with one operationId', async () => {
    const doc: RouteDoc = {
      operationId: 'same',
      summary: 'x',
      tags: ['operations'],
      responses: { 200: { description: 'ok' } },
    };
    await expect(
      documentOf([
        ['GET', '/a', doc],
        ['GET', '/b', doc],
      ]),
    ).rejects.toThrow(/operationId same/);
  });
});
