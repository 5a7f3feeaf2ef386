import type { FastifyInstance } from 'fastify';

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
