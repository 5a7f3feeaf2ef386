/**
 * Where a request's refusals and failures worth an operator's attention are told (the server:
 * the request's logger). Fields never hold a password, token or other secret.
 */
export interface RequestLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

/**
 * What varies with each request a use case answers: where it came from and who hears about it.
 * Passed with each call; everything else the instance was built with.
 */
export interface Caller {
  /** The caller's address, for login records, audit events and a grant's last use. */
  address?: string | undefined;
  userAgent?: string | undefined;
  /** The request's id (as the log names it), for audit events. */
  requestId?: string | undefined;
  /** The request's OpenTelemetry trace id, when tracing is on, for audit events. */
  traceId?: string | undefined;
  log?: RequestLog | undefined;
}
