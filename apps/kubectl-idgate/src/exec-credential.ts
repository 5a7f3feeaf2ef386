import { ExecCredential, type ExecCredentialApiVersion, ExecCredentialRequest } from '@idgate/schema';
import { PluginError } from './errors.js';

/** What kubectl told the plugin through `KUBERNETES_EXEC_INFO`. */
export interface ExecInfo {
  apiVersion: ExecCredentialApiVersion;
  /** `spec.interactive`; undefined when kubectl does not say (kubectl before 1.22 never does). */
  interactive: boolean | undefined;
}

/**
 * Reads `KUBERNETES_EXEC_INFO`. Absent (the plugin run by hand, or an old kubectl), the answer is
 * in `client.authentication.k8s.io/v1beta1`, the version every kubectl since 1.11 understands.
 * @throws {PluginError} when it is set but is not an ExecCredential of a version the plugin speaks.
 */
export function readExecInfo(raw: string | undefined): ExecInfo {
  if (raw === undefined || raw.trim() === '') {
    return { apiVersion: 'client.authentication.k8s.io/v1beta1', interactive: undefined };
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new PluginError('KUBERNETES_EXEC_INFO is not JSON');
  }
  const parsed = ExecCredentialRequest.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.map(String).join('.') || '(root)';
    throw new PluginError(
      `KUBERNETES_EXEC_INFO is not an ExecCredential request: ${where} ${issue?.message ?? ''}`.trim(),
    );
  }
  return { apiVersion: parsed.data.apiVersion, interactive: parsed.data.spec?.interactive };
}

/** The ExecCredential answer: the token, and its expiry as RFC 3339 in whole seconds. */
export function execCredential(
  apiVersion: ExecCredentialApiVersion,
  token: string,
  expiresAt: number,
): ExecCredential {
  const expirationTimestamp = new Date(Math.floor(expiresAt / 1000) * 1000)
    .toISOString()
    .replace('.000Z', 'Z');
  return ExecCredential.parse({ apiVersion, kind: 'ExecCredential', status: { token, expirationTimestamp } });
}
