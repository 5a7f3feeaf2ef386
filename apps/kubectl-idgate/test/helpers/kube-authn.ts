import { request } from 'node:https';
import { evaluate } from '@marcbachmann/cel-js';
import { createLocalJWKSet, type JSONWebKeySet, type JWTPayload, jwtVerify } from 'jose';
import { parse } from 'yaml';
import type { Authenticator, KubeUser } from './kube-apiserver.js';

/** An https request with a certificate authority, answering the status and the parsed JSON body. */
function httpsJson(
  url: string,
  ca: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers, ca }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
        } catch (error) {
          reject(error);
        }
      });
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

interface WebhookKubeconfig {
  clusters: { cluster: { server: string; 'certificate-authority-data'?: string } }[];
  users: { user: { token: string } }[];
}

/**
 * Kubernetes' webhook token authenticator (`--authentication-token-webhook-config-file` with
 * `--authentication-token-webhook-version=v1`): each token is sent as an
 * `authentication.k8s.io/v1` TokenReview with the API server's audiences to the server named in
 * the kubeconfig, with the kubeconfig's bearer token; `status.user` is the user. As the API server
 * does, a review whose `status.audiences` shares none of its audiences is refused.
 */
export function webhookAuthenticator(
  kubeconfigYaml: string,
  audiences: string[],
  ca?: string,
): Authenticator {
  const config = parse(kubeconfigYaml) as WebhookKubeconfig;
  const cluster = config.clusters[0]?.cluster;
  const key = config.users[0]?.user.token;
  if (cluster === undefined || key === undefined)
    throw new Error('the webhook kubeconfig has no cluster or user');
  const authority =
    cluster['certificate-authority-data'] === undefined
      ? ca
      : Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8');
  if (authority === undefined) throw new Error('no certificate authority for the webhook');
  return async (token) => {
    const { status, body } = await httpsJson(cluster.server, authority, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token, audiences },
      }),
    });
    if (status !== 200) throw new Error(`the TokenReview webhook answered ${status}`);
    const review = body as {
      status?: {
        authenticated?: boolean;
        audiences?: string[];
        user?: { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
      };
    };
    const result = review.status;
    if (result?.authenticated !== true || result.user === undefined) return undefined;
    // k8s.io/apiserver: status.audiences must intersect the API server's, when answered
    if (result.audiences !== undefined && !result.audiences.some((a) => audiences.includes(a)))
      return undefined;
    return {
      username: result.user.username,
      uid: result.user.uid,
      groups: result.user.groups ?? [],
      extra: result.user.extra,
    };
  };
}

interface ClaimOrExpression {
  claim?: string;
  expression?: string;
  prefix?: string;
}

interface JwtAuthenticatorConfig {
  issuer: {
    url: string;
    discoveryURL?: string;
    certificateAuthority?: string;
    audiences: string[];
    audienceMatchPolicy?: string;
  };
  claimValidationRules?: { claim?: string; requiredValue?: string; expression?: string; message?: string }[];
  claimMappings: {
    username: ClaimOrExpression;
    groups?: ClaimOrExpression;
    uid?: ClaimOrExpression;
    extra?: { key: string; valueExpression: string }[];
  };
  userValidationRules?: { expression: string; message?: string }[];
}

/** A CEL value (strings, lists of strings) as Kubernetes reads it. */
function celStrings(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value.map(String);
  return [String(value)];
}

/**
 * Kubernetes' structured JWT authenticator (`--authentication-config`, `apiserver.config.k8s.io/v1`
 * `AuthenticationConfiguration`) for its first `jwt` entry: discovery (at `discoveryURL` or the
 * issuer's `/.well-known/openid-configuration`, whose `issuer` must be the configured URL), the
 * JWKS, signature, `iss`, `exp`/`nbf` and the audiences (`MatchAny`), then `claimValidationRules`,
 * `claimMappings` and `userValidationRules`, every CEL expression evaluated by cel-js with the
 * token's claims as `claims` and the mapped user as `user`, as the API server exposes them.
 */
export async function structuredJwtAuthenticator(
  configYaml: string,
  ca?: string,
): Promise<{ authenticate: Authenticator; refusals: string[] }> {
  const document = parse(configYaml) as { apiVersion: string; kind: string; jwt: JwtAuthenticatorConfig[] };
  if (document.apiVersion !== 'apiserver.config.k8s.io/v1' || document.kind !== 'AuthenticationConfiguration')
    throw new Error(`not an AuthenticationConfiguration: ${document.apiVersion} ${document.kind}`);
  const config = document.jwt[0];
  if (config === undefined) throw new Error('no jwt authenticator in the configuration');
  const { url, audiences } = config.issuer;
  if (!url.startsWith('https://')) throw new Error('Kubernetes wants an https issuer');
  // as the API server: the PEM of issuer.certificateAuthority, else the system's roots (here: `ca`)
  const authority = config.issuer.certificateAuthority ?? ca;
  if (authority === undefined) throw new Error('no certificate authority for the issuer');
  const discovery = config.issuer.discoveryURL ?? `${url}/.well-known/openid-configuration`;
  const metadata = (await httpsJson(discovery, authority)).body as { issuer: string; jwks_uri: string };
  if (metadata.issuer !== url) throw new Error(`discovery names the issuer ${metadata.issuer}, not ${url}`);
  const jwks = createLocalJWKSet((await httpsJson(metadata.jwks_uri, authority)).body as JSONWebKeySet);
  const refusals: string[] = [];
  const refuse = (reason: string) => {
    refusals.push(reason);
    return undefined;
  };
  const mapped = (claims: JWTPayload, rule: ClaimOrExpression | undefined): unknown => {
    if (rule === undefined) return undefined;
    if (rule.expression !== undefined) return evaluate(rule.expression, { claims });
    return rule.claim === undefined ? undefined : claims[rule.claim];
  };

  const authenticate: Authenticator = async (token) => {
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, jwks, {
        issuer: url,
        audience: audiences,
        // the algorithms Kubernetes' OIDC authenticator verifies
        algorithms: ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'],
      }));
    } catch (error) {
      return refuse(`jwt: ${(error as Error).message}`);
    }
    for (const rule of config.claimValidationRules ?? []) {
      const ok =
        rule.expression !== undefined
          ? evaluate(rule.expression, { claims }) === true
          : rule.claim !== undefined && claims[rule.claim] === rule.requiredValue;
      if (!ok) return refuse(`claim validation: ${rule.message ?? rule.expression ?? rule.claim}`);
    }
    const { username: usernameRule, groups: groupsRule, uid: uidRule, extra } = config.claimMappings;
    const username = mapped(claims, usernameRule);
    if (typeof username !== 'string' || username === '') return refuse('no username claim');
    const user: KubeUser = {
      username: `${usernameRule.prefix ?? ''}${username}`,
      groups: celStrings(mapped(claims, groupsRule)).map((group) => `${groupsRule?.prefix ?? ''}${group}`),
    };
    const uid = mapped(claims, uidRule);
    if (uid !== undefined) user.uid = String(uid);
    if (extra !== undefined && extra.length > 0) {
      user.extra = {};
      for (const { key, valueExpression } of extra) {
        const values = celStrings(evaluate(valueExpression, { claims }));
        if (values.length > 0) user.extra[key] = values;
      }
    }
    for (const rule of config.userValidationRules ?? []) {
      const celUser = {
        username: user.username,
        uid: user.uid ?? '',
        groups: user.groups,
        extra: user.extra ?? {},
      };
      if (evaluate(rule.expression, { user: celUser }) !== true)
        return refuse(`user validation: ${rule.message ?? rule.expression}`);
    }
    return user;
  };
  return { authenticate, refusals };
}
