/**
 * How the repositories store a value in a column and read it back, alike on both dialects:
 * instants as epoch milliseconds, booleans as 0/1, lists and objects as JSON text.
 */

export function toMs(date: Date): number {
  const ms = date.getTime();
  // An Invalid Date would be stored as NULL (SQLite) or fail obscurely (PostgreSQL).
  if (!Number.isFinite(ms)) throw new TypeError('Cannot store an Invalid Date');
  return ms;
}

export const toMsOrNull = (date: Date | null): number | null => (date === null ? null : toMs(date));

// Number() because drivers may hand back numeric strings for bigint in aggregate or raw queries.
export const toDate = (ms: number): Date => new Date(Number(ms));

export const toDateOrNull = (ms: number | null): Date | null => (ms === null ? null : toDate(ms));

export const toFlag = (value: boolean): number => (value ? 1 : 0);

export const fromFlag = (value: number): boolean => Number(value) !== 0;

export function fromJsonArray<T extends string>(text: string, column: string): T[] {
  const value: unknown = JSON.parse(text);
  if (!Array.isArray(value)) throw new TypeError(`Column ${column} does not hold a JSON array`);
  return value as T[];
}

export function fromJsonObject(text: string, column: string): Record<string, unknown> {
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`Column ${column} does not hold a JSON object`);
  }
  return value as Record<string, unknown>;
}

export const toCount = (row: { n: number | string | bigint }): number => Number(row.n);

/** An RFC 8176 `amr` list as its column holds it: JSON, null for none. */
export const toAmrColumn = (amr: readonly string[] | null | undefined): string | null =>
  amr === undefined || amr === null ? null : JSON.stringify(amr);

/** What {@link toAmrColumn} wrote. */
export const fromAmrColumn = (text: string | null): string[] | null =>
  text === null ? null : fromJsonArray(text, 'amr');
