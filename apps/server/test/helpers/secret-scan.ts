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
const SHAPES = new RegExp(
  [
    '(?<jwt>eyJ[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]*\\.[A-Za-z0-9_-]*)',
    // An API key is `idg_<8 base32>_<43 base64url>`; its prefix alone is its public name.
    '(?<apiKey>idg_[a-z2-7]{8}_[A-Za-z0-9_-]{20,})',
    '(?<authorization>\\b(?:Bearer|Basic) [A-Za-z0-9._~+/-]{16,})',
  ].join('|'),
  'g',
);
const SHAPE_NAMES: Record<string, string> = {
  jwt: 'a JWT-shaped string',
  apiKey: 'an API key',
  authorization: 'an Authorization header value',
};

/** Registered secrets of at least this length are scanned for; shorter ones match ordinary words. */
const MIN_LENGTH = 8;
const WORD = /^[A-Za-z0-9_-]+$/;

/**
 * Scans every log and audit JSON-lines file under `dir/logs` and `dir/audit` for the secrets
 * registered under `dir/secrets` and for token-shaped strings, in one pass of a regular expression
 * over each file for each of: runs of URL-safe characters (a secret made of them — generated
 * secrets, tokens, keys, most test passwords — is found as a whole run, one hash lookup a run),
 * token shapes, and the other secrets (pass phrases) as written, URL-encoded and JSON-escaped.
 * Files are read as latin1: byte for byte, so an ASCII secret matches wherever its bytes are.
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
        for (const form of [
          value,
          encodeURIComponent(value),
          new URLSearchParams({ v: value }).toString().slice(2),
          JSON.stringify(value).slice(1, -1),
        ])
          phrases.set(Buffer.from(form, 'utf8').toString('latin1'), what);
    }
  }
  const wordLengths = new Set([...words.keys()].map((word) => word.length));
  const shortest = Math.max(MIN_LENGTH, Math.min(...wordLengths));
  const runs = new RegExp(`[A-Za-z0-9_-]{${Number.isFinite(shortest) ? shortest : MIN_LENGTH},}`, 'g');
  const phrasePattern =
    phrases.size === 0
      ? undefined
      : new RegExp(
          [...phrases.keys()].map((phrase) => phrase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'),
          'g',
        );
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
      const text = readFileSync(join(dir, file), 'latin1');
      const lines = countLines(text);
      result.files++;
      result.lines += lines;
      const hits: Finding[] = [];
      const at = (index: number, what: string) => hits.push({ file, line: index, what });
      for (const match of text.matchAll(runs)) {
        const what = wordLengths.has(match[0].length) ? words.get(match[0]) : undefined;
        if (what !== undefined) at(match.index, what);
      }
      for (const match of text.matchAll(SHAPES)) {
        const shape = Object.entries(match.groups ?? {}).find(([, value]) => value !== undefined)?.[0];
        at(match.index, SHAPE_NAMES[shape ?? ''] ?? 'a token-shaped string');
      }
      if (phrasePattern !== undefined)
        for (const match of text.matchAll(phrasePattern))
          at(match.index, phrases.get(match[0]) ?? 'a secret');
      if (folder === 'audit') {
        result.events += lines;
        // Each committed event is written once, by the process that recorded it, as one whole line.
        let offset = 0;
        for (const line of text.split('\n')) {
          if (line !== '') {
            const id = eventId(line);
            if (id === undefined) at(offset, 'not one JSON audit event');
            else if (ids.has(id)) at(offset, `event ${id} written twice in the run`);
            else ids.add(id);
          }
          offset += line.length + 1;
        }
      }
      result.findings.push(...withLineNumbers(text, hits));
    }
  }
  return result;
}

/** Lines of `text` (a last line without its newline counts). */
function countLines(text: string): number {
  let lines = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
  return text === '' || text.endsWith('\n') ? lines : lines + 1;
}

/** Turns the character offsets in `hits` into line numbers, ordered by line. */
function withLineNumbers(text: string, hits: Finding[]): Finding[] {
  const sorted = [...hits].sort((a, b) => a.line - b.line);
  let line = 1;
  let from = 0;
  for (const hit of sorted) {
    for (let i = text.indexOf('\n', from); i !== -1 && i < hit.line; i = text.indexOf('\n', i + 1)) {
      line++;
      from = i + 1;
    }
    hit.line = line;
  }
  return sorted;
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
