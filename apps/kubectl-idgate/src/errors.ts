/**
 * A failure the plugin reports to the person as one line on stderr, with a non-zero exit. Its
 * message never carries a token: it is written from what the plugin knows, not copied from a
 * server's answer.
 */
export class PluginError extends Error {
  /** The process exit code: 2 for a usage error, 1 otherwise. */
  readonly exitCode: number;

  constructor(message: string, options: { exitCode?: number; cause?: unknown } = {}) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.name = 'PluginError';
    this.exitCode = options.exitCode ?? 1;
  }
}

/** A usage error: a bad or missing argument. */
export function usageError(message: string): PluginError {
  return new PluginError(`${message} (see kubectl-idgate --help)`, { exitCode: 2 });
}

/** The message of an unknown thrown value, on one line. */
export function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, ' ').trim();
}
