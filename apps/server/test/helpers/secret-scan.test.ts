import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scanRun } from './secret-scan.js';

const CLIENT_SECRET = 'Qm9vb3RzdHJhcC1jbGllbnQtc2VjcmV0LTAxMjM0NTY3';
const PHRASE = 'a sturdy pass phrase!';
const JWT = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1MSJ9.c2lnbmF0dXJl';
const API_KEY = `idg_abcdefgh_${'A'.repeat(43)}`;

function run(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'idgate-scan-'));
  for (const folder of ['secrets', 'logs', 'audit']) mkdirSync(join(dir, folder));
  writeFileSync(
    join(dir, 'secrets', '1.jsonl'),
    [
      ['client secret', CLIENT_SECRET],
      ['password', PHRASE],
      ['password', 'short'],
    ]
      .map((entry) => `${JSON.stringify(entry)}\n`)
      .join(''),
  );
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('the secret scan at the end of a test run', () => {
  it('names the file and line of each secret, token-shaped string and broken or repeated event, never the value', () => {
    const dir = run({
      'logs/a.log': [
        '{"msg":"incoming request","url":"/oauth/token"}',
        `{"msg":"oops","client":{"secret":"${CLIENT_SECRET}"}}`,
        `{"url":"/login?password=${encodeURIComponent(PHRASE)}"}`,
        `{"msg":"short is a word"}`,
      ].join('\n'),
      'audit/b.jsonl': [
        `{"id":"e1","type":"x","details":{"token":"${JWT}"}}`,
        `{"id":"e2","type":"y","details":{"key":"${API_KEY}","prefix":"idg_abcdefgh"}}`,
        `{"id":"e3","type":"z","h":"Bearer ${CLIENT_SECRET.slice(0, 20)}"}`,
        '{"id":"e1","type":"x"}',
        '{"id":"e4","ty',
        '',
      ].join('\n'),
    });
    const result = scanRun(dir);
    expect(result).toMatchObject({ files: 2, lines: 9, events: 5 });
    expect(result.findings).toEqual([
      { file: 'logs/a.log', line: 2, what: 'a client secret the run registered' },
      { file: 'logs/a.log', line: 3, what: 'a password the run registered' },
      { file: 'audit/b.jsonl', line: 1, what: 'a JWT-shaped string' },
      { file: 'audit/b.jsonl', line: 2, what: 'an API key' },
      { file: 'audit/b.jsonl', line: 3, what: 'an Authorization header value' },
      { file: 'audit/b.jsonl', line: 4, what: 'event e1 written twice in the run' },
      { file: 'audit/b.jsonl', line: 5, what: 'not one JSON audit event' },
    ]);
    expect(JSON.stringify(result)).not.toContain(CLIENT_SECRET);
  });

  it('finds nothing in lines that hold only identifiers, hashes and key prefixes', () => {
    const dir = run({
      'logs/a.log': '{"msg":"signed in","clientId":"cl_abcdefghijklmnop","keyPrefix":"idg_abcdefgh"}\n',
      'audit/b.jsonl':
        '{"id":"e1","type":"x","address":"hmac-sha256:47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU","www":"Basic realm=\\"idgate\\""}\n',
    });
    expect(scanRun(dir).findings).toEqual([]);
  });
});
