import * as z from 'zod/mini';

/**
 * A decoded `application/x-www-form-urlencoded` body or query string: each parameter's value, or
 * the list of its values when it was sent more than once.
 */
export type FormValues = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * Why a form field cannot be read: it is `missing` (where the schema requires it), `repeated`
 * (sent more than once where the schema takes one value), or `invalid` (a value the schema
 * refuses).
 */
export type FormFieldProblem = 'missing' | 'repeated' | 'invalid';

/**
 * One field of a form as its schema reads it: the value (the schema's output), or what is wrong
 * with it, in a sentence a client can be shown: `client_id is required`, `parameter scope must
 * not be repeated`, or the schema's own message for a value it refuses (`state is too long`).
 * `sent` is what arrived (a list when repeated).
 */
export type FormField<T> =
  | { readonly ok: true; readonly value: T }
  | {
      readonly ok: false;
      readonly problem: FormFieldProblem;
      readonly description: string;
      readonly sent: string | readonly string[] | undefined;
    };

/** How {@link FormReader} takes what was sent. */
export interface FormReaderOptions {
  /**
   * A parameter sent with an empty value counts as absent (RFC 6749 §3.1: "Parameters sent
   * without a value MUST be treated as if they were omitted"). A repeated parameter stays
   * repeated, blank values included. Off by default: a page's own form keeps what it sent.
   */
  readonly blankIsAbsent?: boolean;
}

/**
 * A form read with the object schema that describes it, field by field: each field is parsed by
 * the schema's own entry for it when the caller reads it, so that a protocol that decides where
 * an error goes by the order of its checks (the authorization endpoint: the client and its
 * redirect_uri first) can read the fields in that order, while what each field may hold — and
 * whether it is required — is the schema's, the same object the OpenAPI document describes. The
 * object's own checks across fields, if it has any, are not read this way.
 * @example
 * const form = new FormReader(LogoutRequestForm, query, { blankIsAbsent: true });
 * const hint = form.field('id_token_hint'); // { ok: true, value: 'eyJ…' } or { ok: false, problem: 'repeated', description: 'parameter id_token_hint must not be repeated', … }
 */
export class FormReader<Shape extends z.core.$ZodShape> {
  readonly #shape: Shape;
  readonly #values: FormValues;
  readonly #blankIsAbsent: boolean;

  constructor(schema: z.core.$ZodObject<Shape>, values: FormValues, options: FormReaderOptions = {}) {
    this.#shape = schema._zod.def.shape;
    this.#values = values;
    this.#blankIsAbsent = options.blankIsAbsent ?? false;
  }

  /** What arrived for `name`: a blank value is none when blanks count as absent. */
  sent(name: keyof Shape & string): string | readonly string[] | undefined {
    const value = Object.hasOwn(this.#values, name) ? this.#values[name] : undefined;
    return this.#blankIsAbsent && value === '' ? undefined : value;
  }

  /** The field `name`, parsed by its entry in the schema. */
  field<K extends keyof Shape & string>(name: K): FormField<z.core.output<Shape[K]>> {
    const sent = this.sent(name);
    const parsed = z.safeParse(this.#shape[name] as Shape[K], sent);
    if (parsed.success) return { ok: true, value: parsed.data as z.core.output<Shape[K]> };
    const issue = parsed.error.issues[0];
    // The whole value is of the wrong kind, and it is a list: one value was expected.
    const repeated =
      Array.isArray(sent) &&
      issue !== undefined &&
      issue.path.length === 0 &&
      (issue.code === 'invalid_type' || issue.code === 'invalid_value');
    if (sent === undefined)
      return { ok: false, problem: 'missing', description: `${name} is required`, sent };
    if (repeated)
      return {
        ok: false,
        problem: 'repeated',
        description: `parameter ${name} must not be repeated`,
        sent,
      };
    return { ok: false, problem: 'invalid', description: issue?.message ?? `${name} is not valid`, sent };
  }
}
