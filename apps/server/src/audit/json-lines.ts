import { closeSync, fchmodSync, openSync, writeSync } from 'node:fs';
import type { AuditEvent } from '@idgate/schema';

/** Where committed audit events are written as JSON lines, one per line. */
export interface AuditLogSink {
  write(events: readonly AuditEvent[]): void;
  /** Reopens the file (after logrotate moved it away: SIGHUP). */
  reopen(): void;
  close(): void;
}

/**
 * The JSON-lines stream of `audit.log`: `off` (undefined), `stdout`, `stderr`, or a file path
 * opened for appending, mode 0600. One event per line exactly as the schema serializes it,
 * separate from the application log, for a log shipper. Writes are synchronous so a line is never
 * torn or reordered, and a line is written only for a committed event (see `createSqlStorage`).
 */
export function openAuditLog(target: string): AuditLogSink | undefined {
  if (target === 'off') return undefined;
  if (target === 'stdout' || target === 'stderr') {
    const fd = target === 'stdout' ? 1 : 2;
    return { write: (events) => writeLines(fd, events), reopen() {}, close() {} };
  }
  let fd: number | undefined = openFile(target);
  return {
    write(events) {
      if (fd !== undefined) writeLines(fd, events);
    },
    reopen() {
      const previous = fd;
      fd = openFile(target);
      if (previous !== undefined) closeSync(previous);
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}

function openFile(path: string): number {
  const fd = openSync(path, 'a', 0o600);
  // An existing file keeps its mode otherwise: personal data must not be world-readable.
  fchmodSync(fd, 0o600);
  return fd;
}

function writeLines(fd: number, events: readonly AuditEvent[]): void {
  if (events.length === 0) return;
  writeSync(fd, events.map((event) => `${JSON.stringify(event)}\n`).join(''));
}
