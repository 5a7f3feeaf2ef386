import type { JwsCrypto } from '@idgate/core';
import { SpanKind } from '@opentelemetry/api';
import { inChildSpan } from './child-span.js';
import type { Tracing } from './tracing.js';

/**
 * `jws` with an internal span around each signature (`sign RS256`). Verification, the work of
 * every token review, is left as it is.
 * @example KeyRing.load(records, secret, now, { jwsCrypto: tracedSigning(nodeJws, tracing) })
 */
export function tracedSigning(jws: JwsCrypto, tracing: Tracing): JwsCrypto {
  return {
    async signer(privateJwk, alg) {
      const sign = await jws.signer(privateJwk, alg);
      const name = `sign ${alg}`;
      const attributes = { 'idgate.signing.algorithm': alg };
      return (data) =>
        inChildSpan(tracing.tracer, name, SpanKind.INTERNAL, attributes, async () => sign(data));
    },
    verifier: (publicJwk, alg) => jws.verifier(publicJwk, alg),
  };
}
