import type { SigningAlgorithm } from '@idgate/schema';
import { AdminError } from '../admin/errors.js';
import { ACR } from '../factors/assurance.js';
import type { ClusterRecord } from '../model.js';
import { TOKEN_REVIEW_EXTRA } from '../token-review/review.js';

/** Signing algorithms Kubernetes' JWT authenticator verifies (it has no EdDSA). */
export const KUBERNETES_JWT_ALGORITHMS: readonly SigningAlgorithm[] = ['RS256', 'ES256'];

/** A CEL rule with the message Kubernetes reports when it fails. */
export interface CelRule {
  expression: string;
  message: string;
}

/**
 * A Kubernetes `AuthenticationConfiguration` (`apiserver.config.k8s.io/v1`) with one JWT
 * authenticator, as {@link clusterAuthenticationConfiguration} makes it.
 */
export interface AuthenticationConfiguration {
  apiVersion: 'apiserver.config.k8s.io/v1';
  kind: 'AuthenticationConfiguration';
  jwt: Array<{
    issuer: {
      url: string;
      discoveryURL?: string;
      certificateAuthority?: string;
      audiences: string[];
      audienceMatchPolicy: 'MatchAny';
    };
    claimValidationRules: CelRule[];
    claimMappings: {
      username: { claim: string; prefix: string };
      groups: { claim: string; prefix: string };
      uid: { claim: string };
      extra: Array<{ key: string; valueExpression: string }>;
    };
    userValidationRules: CelRule[];
  }>;
}

/**
 * Kubernetes' structured authentication configuration for idgate as the JWT issuer of one
 * cluster: the cluster's audience, and the user as TokenReview reports it — username from
 * `preferred_username` and groups from `groups`, both without a further prefix (idgate's groups
 * of external providers carry theirs already), uid from `sub`, and the TokenReview `extra` keys.
 * Email is not mapped: `email_verified` is true only for emails a trusted upstream verified
 * (`trustEmailVerified`), and Kubernetes would refuse every other user's token. Names Kubernetes reserves (`system:`) are refused.
 * `discoveryURL` is given when the API server should fetch discovery elsewhere than
 * `{issuer}/.well-known/openid-configuration` (an in-cluster address, say); `certificateAuthority`
 * (PEM) when the system roots of the API server do not vouch for idgate's certificate, as the
 * webhook kubeconfig's `certificate-authority-data` does for the webhook. A cluster that requires
 * a second factor gets one more claim validation rule: `acr` must be the MFA one, so the API
 * server refuses a password-only token even if idgate were bypassed.
 * @throws AdminError `invalid_input` for an issuer that is not https, or a signing algorithm
 * Kubernetes does not accept (EdDSA).
 * @example const config = clusterAuthenticationConfiguration(cluster, { issuer: 'https://id.example.com/oauth', algorithm: 'RS256' });
 */
export function clusterAuthenticationConfiguration(
  cluster: Pick<ClusterRecord, 'name' | 'audience'> & { requireMfa?: boolean },
  options: {
    issuer: string;
    algorithm: SigningAlgorithm;
    discoveryUrl?: string;
    certificateAuthority?: string;
  },
): AuthenticationConfiguration {
  const refuse = (message: string) =>
    new AdminError('invalid_input', 'cluster', message, { key: cluster.name });
  if (!options.issuer.startsWith('https://'))
    throw refuse(
      `the issuer ${options.issuer} is not https: Kubernetes accepts only an https JWT issuer (set issuer to an https URL)`,
    );
  if (!KUBERNETES_JWT_ALGORITHMS.includes(options.algorithm))
    throw refuse(
      `tokens are signed with ${options.algorithm}, which Kubernetes does not verify: use RS256 or ES256 (signing.algorithm), then idgate keys rotate`,
    );
  const issuer: AuthenticationConfiguration['jwt'][number]['issuer'] = {
    url: options.issuer,
    audiences: [cluster.audience],
    audienceMatchPolicy: 'MatchAny',
  };
  if (options.discoveryUrl !== undefined) issuer.discoveryURL = options.discoveryUrl;
  if (options.certificateAuthority !== undefined) issuer.certificateAuthority = options.certificateAuthority;
  return {
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'AuthenticationConfiguration',
    jwt: [
      {
        issuer,
        claimValidationRules: [
          {
            expression: "has(claims.preferred_username) && claims.preferred_username != ''",
            message: `the token has no preferred_username: ask idgate for a token with resource=${cluster.audience}`,
          },
          {
            expression: 'has(claims.client_id) && has(claims.sid)',
            message: 'the token is not an idgate access token of a signed-in user',
          },
          ...(cluster.requireMfa === true ? [mfaClaimRule(cluster.name)] : []),
        ],
        claimMappings: {
          username: { claim: 'preferred_username', prefix: '' },
          groups: { claim: 'groups', prefix: '' },
          uid: { claim: 'sub' },
          extra: [
            { key: TOKEN_REVIEW_EXTRA.clientId, valueExpression: 'claims.client_id' },
            { key: TOKEN_REVIEW_EXTRA.grantId, valueExpression: 'claims.sid' },
          ],
        },
        userValidationRules: [
          {
            expression: "!user.username.startsWith('system:')",
            message: 'username must not start with system:, which Kubernetes reserves',
          },
          {
            expression: "user.groups.all(group, !group.startsWith('system:'))",
            message: 'groups must not start with system:, which Kubernetes reserves',
          },
        ],
      },
    ],
  };
}

/**
 * The claim validation rule of a cluster that requires a second factor: the token's `acr` is the
 * MFA one (`amr` is an array whose values idgate may extend; `acr` says it in one value).
 * @example mfaClaimRule('prod').expression // "has(claims.acr) && claims.acr == 'urn:idgate:acr:mfa'"
 */
export function mfaClaimRule(cluster: string): CelRule {
  return {
    expression: `has(claims.acr) && claims.acr == '${ACR.mfa}'`,
    message: `cluster ${cluster} requires a sign-in with a second factor (acr ${ACR.mfa}): sign in again with kubectl idgate`,
  };
}

/** A kubeconfig (`apiVersion: v1`, `kind: Config`) for kube-apiserver's webhook token authenticator. */
export interface WebhookKubeconfig {
  apiVersion: 'v1';
  kind: 'Config';
  clusters: Array<{ name: string; cluster: { server: string; 'certificate-authority-data'?: string } }>;
  users: Array<{ name: string; user: { token: string } }>;
  contexts: Array<{ name: string; context: { cluster: string; user: string } }>;
  'current-context': string;
}

/**
 * The kubeconfig kube-apiserver's `--authentication-token-webhook-config-file` reads: server
 * `{issuer}/authenticate`, the cluster's API key as the bearer token, and — for an https issuer
 * whose certificate the system roots do not vouch for — the CA, base64 PEM.
 * @example const kubeconfig = webhookKubeconfig({ issuer, cluster: 'prod', apiKey: key });
 */
export function webhookKubeconfig(options: {
  issuer: string;
  cluster: string;
  apiKey: string;
  certificateAuthorityData?: string;
}): WebhookKubeconfig {
  const server: WebhookKubeconfig['clusters'][number]['cluster'] = {
    server: `${options.issuer}/authenticate`,
  };
  if (options.certificateAuthorityData !== undefined && options.issuer.startsWith('https://'))
    server['certificate-authority-data'] = options.certificateAuthorityData;
  const user = `idgate-${options.cluster}`;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'idgate', cluster: server }],
    users: [{ name: user, user: { token: options.apiKey } }],
    contexts: [{ name: 'webhook', context: { cluster: 'idgate', user } }],
    'current-context': 'webhook',
  };
}
