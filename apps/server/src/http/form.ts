import type { FastifyInstance, FastifyRequest } from 'fastify';

/** A decoded form body: a field sent more than once is an array, so handlers can refuse repeats. */
export type FormBody = Record<string, string | string[]>;

/** Parses `application/x-www-form-urlencoded` bodies (RFC 6749 §3.2 requires them at the token endpoint). */
export function installFormParser(app: FastifyInstance): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => {
      const form: FormBody = Object.create(null);
      for (const [name, value] of new URLSearchParams(body as string)) {
        const existing = form[name];
        form[name] =
          existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
      }
      done(null, form);
    },
  );
}

/** Whether the request says its body is `application/x-www-form-urlencoded` (in any case). */
export function isFormRequest(request: FastifyRequest): boolean {
  return (
    request.headers['content-type']?.toLowerCase().startsWith('application/x-www-form-urlencoded') ?? false
  );
}
