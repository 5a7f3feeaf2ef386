import { base64url, fromBase64url, utf8 } from '../internal/encoding.js';
import { AdminError, type AdminObject } from './errors.js';

/**
 * The opaque `nextCursor` of a listing page: the sort key of the page's last item, base64url.
 * @example const nextCursor = encodeCursor('alice');
 */
export function encodeCursor(key: string): string {
  return base64url(utf8(key));
}

/**
 * The sort key a `?cursor=` names.
 * @throws AdminError `invalid_input` naming `cursor` when it is not one this server gave.
 * @example const after = decodeCursor(query.cursor, 'user');
 */
export function decodeCursor(cursor: string | undefined, object: AdminObject): string | undefined {
  if (cursor === undefined) return undefined;
  try {
    const key = new TextDecoder('utf-8', { fatal: true }).decode(fromBase64url(cursor));
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no sort key holds one
    if (key !== '' && !/[\u0000-\u001f\u007f]/.test(key)) return key;
  } catch {
    // Not base64url, or not UTF-8: refused below.
  }
  throw new AdminError('invalid_input', object, 'cursor: must be the nextCursor of a previous page');
}

/**
 * A listing page from `limit + 1` rows fetched: the first `limit` and, when there were more, the
 * cursor after the last one shown.
 * @example const page = pageFrom(rows, 100, (user) => user.username.toLowerCase());
 */
export function pageFrom<T>(
  rows: readonly T[],
  limit: number,
  key: (row: T) => string,
): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return {
    items,
    nextCursor: rows.length > limit && last !== undefined ? encodeCursor(key(last)) : null,
  };
}
