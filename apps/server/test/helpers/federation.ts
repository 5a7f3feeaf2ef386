import { sealProviderConfig } from '@idgate/core/admin';
import { IdentityProviderConfig, type IdentityProviderConfigInput } from '@idgate/schema';
import type { TestServer } from './server.js';

/** Stores an identity provider in the test server's database, as `idgate idps add` would. */
export async function addIdentityProvider(t: TestServer, input: IdentityProviderConfigInput): Promise<void> {
  const config = IdentityProviderConfig.parse(input);
  const { storage, keyPolicy } = t.server.services;
  const now = new Date();
  await storage.identityProviders.create({
    name: config.name,
    type: config.type,
    config: await sealProviderConfig(config, keyPolicy.secret),
    disabled: config.disabled,
    createdAt: now,
    updatedAt: now,
  });
}

/**
 * The user a TokenReview at `issuer` (with the `tokenreview` key `reviewKey`) gives the holder of
 * `accessToken`, or `'not authenticated'`: what Kubernetes would see of a federated user now.
 */
export async function reviewedUser(
  issuer: string,
  reviewKey: string,
  accessToken: string,
): Promise<{ username: string; groups?: string[] } | 'not authenticated'> {
  const response = await fetch(`${issuer}/authenticate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${reviewKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: accessToken },
    }),
  });
  const { status } = (await response.json()) as {
    status: { authenticated: boolean; user: { username: string; groups?: string[] } };
  };
  return status.authenticated ? status.user : 'not authenticated';
}

/** The groups of {@link reviewedUser}, or `'not authenticated'`. */
export async function reviewedGroups(
  issuer: string,
  reviewKey: string,
  accessToken: string,
): Promise<string[] | undefined | 'not authenticated'> {
  const user = await reviewedUser(issuer, reviewKey, accessToken);
  return user === 'not authenticated' ? user : user.groups;
}
