// Number formats of the report.

export const mb = (/** @type {number | undefined} */ bytes) =>
  bytes === undefined || bytes === 0 ? '—' : `${(bytes / 2 ** 20).toFixed(0)}`;
export const ratio = (/** @type {number | undefined} */ r) =>
  r === undefined || !Number.isFinite(r) ? '—' : `${r.toFixed(2)}×`;
export const int = (/** @type {number} */ n) => Math.round(n).toLocaleString('en-US');
export const mark = (/** @type {{ met?: boolean, why?: string }} */ r) =>
  r.met === undefined ? `— (${r.why})` : r.met ? '✓' : r.why === undefined ? '✗' : `✗ (${r.why})`;
