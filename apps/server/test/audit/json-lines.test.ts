import { mkdtempSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { completeAuditEvents } from '@idgate/core';
import { AuditEvent } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import { openAuditLog } from '../../src/audit/json-lines.js';

const event = (subject: string) =>
  completeAuditEvents(
    [{ type: 'sign-out', actor: { kind: 'user', id: subject }, subject, details: { grantsRevoked: 0 } }],
    { now: () => Date.parse('2026-01-01T00:00:00Z') },
  );

describe('the audit JSON-lines file', () => {
  it('appends one event a line, makes the file 0600, and starts a new file when reopened (logrotate)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'idgate-audit-log-'));
    const file = join(dir, 'audit.jsonl');
    writeFileSync(file, '', { mode: 0o644 });
    const sink = openAuditLog(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    sink?.write([...event('a'), ...event('b')]);
    renameSync(file, `${file}.1`);
    sink?.reopen();
    sink?.write(event('c'));
    sink?.close();
    const read = (path: string) =>
      readFileSync(path, 'utf8')
        .trimEnd()
        .split('\n')
        .map((line) => AuditEvent.parse(JSON.parse(line)).subject);
    expect(read(`${file}.1`)).toEqual(['a', 'b']);
    expect(read(file)).toEqual(['c']);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('is off by default', () => {
    expect(openAuditLog('off')).toBeUndefined();
  });
});
