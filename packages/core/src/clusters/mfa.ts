import { OAuthProtocolError } from '../errors.js';
import { ACR, acrOf } from '../factors/assurance.js';

/** A cluster whose tokens need a sign-in with a second factor: its name and audience. */
export interface MfaCluster {
  name: string;
  audience: string;
}

/**
 * The names of the clusters among `clusters` that require a second factor and whose audience is
 * in `audience` (a token's `aud`, a grant's resources).
 * @example clustersNeedingMfa([{ name: 'prod', audience: 'kubernetes:prod', requireMfa: true }], ['kubernetes:prod']) // ['prod']
 */
export function clustersNeedingMfa(
  clusters: ReadonlyArray<MfaCluster & { requireMfa?: boolean }>,
  audience: readonly string[],
): string[] {
  return clusters
    .filter((cluster) => cluster.requireMfa !== false && audience.includes(cluster.audience))
    .map((cluster) => cluster.name);
}

/** A client as far as its second-factor policy goes. */
export interface MfaClient {
  clientId: string;
  requireMfa?: boolean;
}

/**
 * Why a sign-in that reached `amr` may not have a token for `audience` (for `client`): the client
 * that requires a second factor, or the clusters that do, told as a sentence; undefined when it may.
 * @example mfaShortfall(clusters, ['kubernetes:prod'], ['pwd']) // 'cluster prod requires a sign-in with a second factor (acr urn:idgate:acr:mfa)'
 */
export function mfaShortfall(
  clusters: ReadonlyArray<MfaCluster & { requireMfa?: boolean }>,
  audience: readonly string[],
  amr: readonly string[] | null | undefined,
  client?: MfaClient,
): string | undefined {
  if (acrOf(amr) === ACR.mfa) return undefined;
  if (client?.requireMfa === true)
    return `client ${client.clientId} requires a sign-in with a second factor (acr ${ACR.mfa})`;
  const names = clustersNeedingMfa(clusters, audience);
  if (names.length === 0) return undefined;
  const which = names.length === 1 ? `cluster ${names[0]} requires` : `clusters ${names.join(', ')} require`;
  return `${which} a sign-in with a second factor (acr ${ACR.mfa})`;
}

/**
 * Refuses a token for a cluster, or a client, that requires a second factor from a grant whose
 * sign-in had none: `invalid_grant` (RFC 6749 §5.2; the token endpoint has no step-up error of its
 * own), whose description tells the client to sign in again with `acr_values=urn:idgate:acr:mfa`.
 * That the description ends with ` acr_values=<acr>` is a contract (docs/kubernetes/clusters.md):
 * kubectl-idgate reads the acr of its step-up sign-in there.
 * @throws OAuthProtocolError invalid_grant.
 * @example assertMfaFor(clusters, ['kubernetes:prod'], grant.amr);
 */
export function assertMfaFor(
  clusters: ReadonlyArray<MfaCluster & { requireMfa?: boolean }>,
  audience: readonly string[],
  amr: readonly string[] | null | undefined,
  client?: MfaClient,
): void {
  const shortfall = mfaShortfall(clusters, audience, amr, client);
  if (shortfall === undefined) return;
  throw new OAuthProtocolError(
    'invalid_grant',
    `${shortfall}, and this grant's sign-in had none: sign in again (authorization code or device flow) with acr_values=${ACR.mfa}`,
  );
}
