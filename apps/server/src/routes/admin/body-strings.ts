import { AdminError, type AdminObject } from '@idgate/core';

// biome-ignore lint/suspicious/noControlCharactersInRegex: what the check looks for
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Refuses a JSON body holding a string with a control character anywhere (PostgreSQL cannot
 * store NUL; no name, URI or scope has one), naming the field.
 * @throws AdminError `invalid_input` about `object`.
 * @example refuseControlCharacters(request.body, 'client');
 */
export function refuseControlCharacters(body: unknown, object: AdminObject, path = ''): void {
  if (typeof body === 'string') {
    if (CONTROL.test(body))
      throw new AdminError('invalid_input', object, `${path || 'body'}: must not contain control characters`);
  } else if (Array.isArray(body)) {
    for (const [index, item] of body.entries()) refuseControlCharacters(item, object, `${path}[${index}]`);
  } else if (typeof body === 'object' && body !== null) {
    for (const [key, value] of Object.entries(body)) {
      const field = path === '' ? key : `${path}.${key}`;
      if (CONTROL.test(key))
        throw new AdminError(
          'invalid_input',
          object,
          `${path || 'body'}: a field name holds a control character`,
        );
      refuseControlCharacters(value, object, field);
    }
  }
}
