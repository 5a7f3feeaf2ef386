import { OAuthProtocolError } from '../errors.js';
import type { ClientRecord } from '../model.js';
import type { TokenEndpointContext } from './context.js';

/**
 * Runs one step of a grant — the claim of its code or token, what the claim lets through and the
 * audit events of both — in one transaction, with `context.storage` bound to it.
 *
 * A refusal (`OAuthProtocolError`) is thrown only once the transaction has committed: what led to
 * it stays (a consumed code, a rotated token, a revoked grant and its audit event), as a client
 * that presents a code wrongly must not get to try it again. Anything else thrown (the database
 * went away) rolls the whole step back, so the code or token can be presented again.
 * @example return grantStep(context, client, async (step) => issueUserTokens(step, ...));
 */
export async function grantStep<T>(
  context: TokenEndpointContext,
  client: ClientRecord,
  work: (step: TokenEndpointContext) => Promise<T>,
): Promise<T> {
  // Read before the transaction: inside it only the transaction's storage may be used (on SQLite
  // a read through another would wait for the transaction to end), and a client with audiences of
  // its own needs the clusters' to issue (see issueUserTokens).
  const clusters =
    client.audiences.length > 0 && context.clusterAudiences !== undefined
      ? await context.clusterAudiences()
      : undefined;
  const mfaClusters =
    client.audiences.length > 0 && context.mfaClusters !== undefined
      ? await context.mfaClusters()
      : undefined;
  const outcome = await context.storage.transaction(async (tx) => {
    try {
      const step: TokenEndpointContext = {
        ...context,
        storage: tx,
        ...(clusters === undefined ? {} : { clusterAudiences: async () => clusters }),
        ...(mfaClusters === undefined ? {} : { mfaClusters: async () => mfaClusters }),
      };
      return { ok: true as const, value: await work(step) };
    } catch (error) {
      if (error instanceof OAuthProtocolError) return { ok: false as const, error };
      throw error;
    }
  });
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}
