import { AdminError, type AdminObject } from './errors.js';

/**
 * The entity tag of an object as the admin API shows it (RFC 9110 §8.8.3): a 64-bit FNV-1a hash
 * of its view's JSON, quoted. Any change of a shown field changes it and nothing else does (views
 * are built field by field in a fixed order). It tells versions of one object apart for `If-Match`;
 * it is not a security property and never covers a secret (views hold none).
 * Views carry it as their `etag` field and the admin API sends it as the `ETag` header.
 * @example const etag = etagOf({ username: 'alice', groups: ['dev'] }); // '"9c1d…"'
 */
export function etagOf(fields: unknown): string {
  const text = JSON.stringify(fields);
  // Two 32-bit FNV-1a lanes with different offset bases: 64 bits, no BigInt, any runtime.
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (a >>> 15);
  }
  return `"${(a >>> 0).toString(16).padStart(8, '0')}${(b >>> 0).toString(16).padStart(8, '0')}"`;
}

/**
 * Checks an `If-Match` precondition (RFC 9110 §13.1.1) against the object's current tag: no
 * header, `*`, or a list holding the current tag lets the change go on. Call it in the same
 * transaction as the change, on the object as read there.
 * @throws AdminError `precondition_failed` (412) when the object has changed since the caller read it.
 * @example checkIfMatch(request.headers['if-match'], userView(user).etag, 'user', user.username);
 */
export function checkIfMatch(
  ifMatch: string | undefined,
  currentEtag: string,
  object: AdminObject,
  key: string,
): void {
  if (ifMatch === undefined) return;
  const wanted = ifMatch.split(',').map((tag) => tag.trim());
  // A weak tag (W/"…") never matches: If-Match compares strongly.
  if (wanted.includes('*') || wanted.includes(currentEtag)) return;
  throw new AdminError(
    'precondition_failed',
    object,
    `${object.replaceAll('_', ' ')} ${key} has changed since it was read (If-Match ${ifMatch.slice(0, 80)} is not its ETag ${currentEtag}); read it again and retry`,
    { key },
  );
}
