import { OAuthProtocolError } from '../errors.js';
import type { TokenEndpointContext } from './context.js';

/**
 * Runs one step of a grant — the claim of its code or token, what the claim lets through and the
 * audit events of both — in one transaction, with `context.storage` bound to it.
 *
 * A refusal (`OAuthProtocolError`) is thrown only once the transaction has committed: what led to
 * it stays (a consumed code, a rotated token, a revoked grant and its audit event), as a client
 * that presents a code wrongly must not get to try it again. Anything else thrown (the database
 * went away) rolls the whole step back, so the code or token can be presented again.
 * @example return grantStep(context, async (step) => issueUserTokens(step, ...));
 */
export async function grantStep<T>(
  context: TokenEndpointContext,
  work: (step: TokenEndpointContext) => Promise<T>,
): Promise<T> {
  const outcome = await context.storage.transaction(async (tx) => {
    try {
      return { ok: true as const, value: await work({ ...context, storage: tx }) };
    } catch (error) {
      if (error instanceof OAuthProtocolError) return { ok: false as const, error };
      throw error;
    }
  });
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}
