import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { openapiDocument, type RouteCatalog } from '../openapi/document.js';

const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/** What `GET /openapi.json` answers, as far as a reader relies on it: an OpenAPI 3.1 document. */
const OpenApiDocument = z
  .looseObject({
    openapi: z.string().regex(/^3\.1\.\d+$/),
    info: z.looseObject({ title: z.string(), version: z.string() }),
    paths: z.record(z.string(), z.looseObject({})),
  })
  .meta({
    id: 'OpenApiDocument',
    description: 'an OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.0)',
  });

/**
 * `GET /openapi.json`: the OpenAPI 3.1 document of every route the `catalog` recorded (see
 * {@link openapiDocument}), built at the first request, once every route is registered, and
 * answered from memory after.
 * @example await app.register(openapiRoutes, { catalog });
 */
export async function openapiRoutes(
  app: FastifyInstance,
  { catalog }: { catalog: RouteCatalog },
): Promise<void> {
  const { config } = app.idgate;
  let body: string | undefined;
  app.get(
    '/openapi.json',
    {
      logLevel: 'warn',
      config: {
        doc: {
          operationId: 'getOpenApiDocument',
          summary: 'This OpenAPI document',
          description:
            "The OpenAPI 3.1 description of every route the server answers, generated from each route's own description and the zod schemas it validates with.",
          tags: ['operations'],
          responses: {
            200: {
              description: 'the OpenAPI document',
              json: OpenApiDocument,
            },
          },
        },
      },
    },
    async (_request, reply) => {
      body ??= JSON.stringify(
        openapiDocument(catalog.routes, {
          root: config.issuer.slice(0, -'/oauth'.length),
          issuer: config.issuer,
          version: VERSION,
        }),
      );
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );
}
