import { AdminError, type AdminObject } from '@idgate/core/admin';

// biome-ignore lint/suspicious/noControlCharactersInRegex: what the check looks for
const CONTROL = /[\u0000-\u001f\u007f]/;

/** No admin object nests this deep; a deeper body is refused before it is walked further. */
const MAX_DEPTH = 16;

/**
 * Refuses a JSON body holding a string with a control character anywhere (PostgreSQL cannot
 * store NUL; no name, URI or scope has one), naming the field, and a body nested deeper than any
 * admin object. Walks with an explicit stack: a hostile body cannot exhaust the call stack.
 * @throws AdminError `invalid_input` about `object`.
 * @example refuseControlCharacters(request.body, 'client');
 */
export function refuseControlCharacters(body: unknown, object: AdminObject): void {
  const pending: { value: unknown; path: string; depth: number }[] = [{ value: body, path: '', depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, path, depth } = next;
    const where = path || 'body';
    if (typeof value === 'string') {
      if (CONTROL.test(value))
        throw new AdminError('invalid_input', object, `${where}: must not contain control characters`);
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= MAX_DEPTH) throw new AdminError('invalid_input', object, `${where}: nested too deeply`);
    const entries = Array.isArray(value)
      ? value.map((item, index) => [`${path}[${index}]`, item] as const)
      : Object.entries(value).map(([key, item]) => {
          if (CONTROL.test(key))
            throw new AdminError('invalid_input', object, `${where}: a field name holds a control character`);
          return [path === '' ? key : `${path}.${key}`, item] as const;
        });
    for (const [field, item] of entries.reverse())
      pending.push({ value: item, path: field, depth: depth + 1 });
  }
}
