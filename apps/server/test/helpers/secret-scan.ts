import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * One line of the run's output that holds a secret — where, and what kind (never the value) — or
 * an audit line that is not one whole event, or an event written twice.
 */
export interface Finding {
  /** Relative to the run directory, e.g. `logs/http~token.test.ts.1234.1.log`. */
  file: string;
  line: number;
  what: string;
}

export interface ScanResult {
  files: number;
  lines: number;
  /** Lines of the audit JSON-lines files: one event each. */
  events: number;
  /** Distinct registered secrets scanned for. */
  secrets: number;
  findings: Finding[];
}

/** Token-shaped strings, whoever made them: no log line or audit event may hold one. */
const SHAPES: Array<{ hint: string; pattern: RegExp; what: string }> = [
  { hint: 'eyJ', pattern: /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/, what: 'a JWT-shaped string' },
  // An API key is `idg_<8 base32>_<43 base64url>`; its prefix alone is its public name.
  { hint: 'idg_', pattern: /idg_[a-z2-7]{8}_[A-Za-z0-9_-]{20,}/, what: 'an API key' },
  {
    hint: 'B',
    pattern: /\b(?:Bearer|Basic) [A-Za-z0-9._~+/-]{16,}=*/,
    what: 'an Authorization header value',
  },
];

/** Registered secrets of at least this length are scanned for; shorter ones match ordinary words. */
const MIN_LENGTH = 8;
const WORD = /^[A-Za-z0-9_-]+$/;
const RUNS = /[A-Za-z0-9_-]{8,}/g;

/**
 * Scans every log and audit JSON-lines file under `dir/logs` and `dir/audit` for the secrets
 * registered under `dir/secrets` and for token-shaped strings. A secret made of URL-safe
 * characters (generated secrets, tokens, keys, most test passwords) is found as a whole run of
 * such characters on a line (one hash lookup a run); any other (a pass phrase) by a substring
 * search, as written and URL-encoded.
 */
export function scanRun(dir: string): ScanResult {
  const words = new Map<string, string>();
  const phrases = new Map<string, string>();
  for (const file of list(join(dir, 'secrets'))) {
    for (const line of readFileSync(join(dir, 'secrets', file), 'utf8').split('\n')) {
      if (line === '') continue;
      const [kind, value] = JSON.parse(line) as [string, string];
      if (value.length < MIN_LENGTH) continue;
      const what = `a ${kind} the run registered`;
      if (WORD.test(value)) words.set(value, what);
      else
        for (const form of new Set([
          value,
          encodeURIComponent(value),
          new URLSearchParams({ v: value }).toString().slice(2),
          JSON.stringify(value).slice(1, -1),
        ]))
          phrases.set(form, what);
    }
  }
  const ids = new Set<string>();
  const result: ScanResult = {
    files: 0,
    lines: 0,
    events: 0,
    secrets: words.size + phrases.size,
    findings: [],
  };
  for (const folder of ['logs', 'audit']) {
    for (const name of list(join(dir, folder))) {
      const file = `${folder}/${name}`;
      const text = readFileSync(join(dir, file), 'utf8');
      const lines = text.split('\n');
      if (lines.at(-1) === '') lines.pop();
      result.files++;
      result.lines += lines.length;
      if (folder === 'audit') result.events += lines.length;
      lines.forEach((line, index) => {
        const found = (what: string) => result.findings.push({ file, line: index + 1, what });
        // Each committed event is written once, by the process that recorded it, as one whole line.
        if (folder === 'audit') {
          const id = eventId(line);
          if (id === undefined) found('not one JSON audit event');
          else if (ids.has(id)) found(`event ${id} written twice in the run`);
          else ids.add(id);
        }
        for (const shape of SHAPES)
          if (line.includes(shape.hint) && shape.pattern.test(line)) found(shape.what);
        for (const run of line.match(RUNS) ?? []) {
          const what = words.get(run);
          if (what !== undefined) found(what);
        }
      });
      for (const [phrase, what] of phrases) {
        for (let at = text.indexOf(phrase); at !== -1; at = text.indexOf(phrase, at + 1)) {
          result.findings.push({ file, line: lineOf(text, at), what });
        }
      }
    }
  }
  return result;
}

function eventId(line: string): string | undefined {
  try {
    const event = JSON.parse(line) as { id?: unknown; type?: unknown };
    return typeof event.id === 'string' && typeof event.type === 'string' ? event.id : undefined;
  } catch {
    return undefined;
  }
}

function list(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

function lineOf(text: string, at: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) line++;
  return line;
}
