import { base64url, fromBase64url, utf8 } from '../internal/encoding.js';
import { AdminError, type AdminObject } from './errors.js';

/** Where a keyset page by creation time ends: the last row's creation time and unique id. */
export interface KeysetPosition {
  createdAt: Date;
  id: string;
}

const CURSOR = /^([0-9]{1,16}):([A-Za-z0-9_.-]{1,128})$/;

/** The opaque `nextCursor` after `position`. */
export function encodeKeysetCursor(position: KeysetPosition): string {
  return base64url(utf8(`${position.createdAt.getTime()}:${position.id}`));
}

/**
 * The position a `cursor` of {@link encodeKeysetCursor} names.
 * @throws AdminError `invalid_input` about `object` for anything else.
 */
export function decodeKeysetCursor(cursor: string, object: AdminObject): KeysetPosition {
  let match: RegExpExecArray | null;
  try {
    match = CURSOR.exec(new TextDecoder('utf-8', { fatal: true }).decode(fromBase64url(cursor)));
  } catch {
    match = null;
  }
  if (match === null)
    throw new AdminError(
      'invalid_input',
      object,
      'cursor: not a cursor this listing answered; start over without it',
    );
  return { createdAt: new Date(Number(match[1])), id: match[2] as string };
}
