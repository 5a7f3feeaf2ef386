import { sealProviderConfig } from '@idgate/core/admin';
import { IdentityProviderConfig, type IdentityProviderConfigInput } from '@idgate/schema';
import { expect } from 'vitest';
import type { TestServer } from './server.js';
import type { UpstreamOidc } from './upstream-oidc.js';

type OidcProviderInput = Extract<IdentityProviderConfigInput, { type: 'oidc' }>;

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
 * Stores the test upstream `upstream` as OIDC identity provider `corp` (or `name`), with its issuer
 * and client credentials; `settings` carries the rest (scopes, token client, mapping, …).
 */
export async function addUpstreamProvider(
  t: TestServer,
  upstream: Pick<UpstreamOidc, 'issuer' | 'clientId' | 'clientSecret'>,
  settings: Partial<Omit<OidcProviderInput, 'type' | 'issuer' | 'clientId' | 'clientSecret'>> = {},
): Promise<void> {
  await addIdentityProvider(t, {
    type: 'oidc',
    name: 'corp',
    issuer: upstream.issuer,
    clientId: upstream.clientId,
    clientSecret: upstream.clientSecret,
    ...settings,
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

/**
 * The `upstream.revalidated` events of one grant as an administrator reads the trail
 * (`GET /admin/v1/events` with an `admin` key), oldest first: each check's outcome and reason.
 */
export async function revalidationEvents(
  t: TestServer,
  adminKey: string,
  grantId: string,
): Promise<Array<{ outcome: string; reason: string | null }>> {
  const response = await fetch(`${t.baseUrl}/admin/v1/events?type=upstream.revalidated&limit=500`, {
    headers: { authorization: `Bearer ${adminKey}` },
  });
  expect(response.status).toBe(200);
  const { items } = (await response.json()) as {
    items: Array<{ outcome: string; details: { grantId: string; reason: string | null } }>;
  };
  return items
    .filter((event) => event.details.grantId === grantId)
    .map((event) => ({ outcome: event.outcome, reason: event.details.reason }));
}

/** The grant (`sid`) an idgate access token belongs to. */
export function grantIdOf(accessToken: string): string {
  const payload = accessToken.split('.')[1] ?? '';
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')).sid as string;
}

/** A token answer of idgate's token endpoint, as the federation tests read it. */
export interface Tokens {
  access_token: string;
  refresh_token: string;
}

/**
 * What `federation.revalidateMaxStaleness` (`maxStalenessMs`, its default a day) promises of a
 * grant opened by `signIn` through an upstream that `down()` makes unreachable and `up()` brings
 * back, over real HTTP: while the upstream is down, refreshes go on until the limit after it last
 * vouched; once it answers again, a re-check — due at once past the limit — confirms the grant and
 * the limit counts from there; past the limit with the upstream down again, the refresh answers
 * `invalid_grant` saying since when, the grant is revoked (TokenReview refuses its access token)
 * and the audit trail says why. The injected clock moves; nothing sleeps.
 */
export async function expectRefreshesEndPastMaxStaleness(scenario: {
  t: TestServer;
  clock: { advance(ms: number): void };
  reviewKey: string;
  adminKey: string;
  upstream: { down(): Promise<void>; up(): Promise<void> };
  signIn(): Promise<Tokens>;
  refresh(refreshToken: string): Promise<{ status: number; body: Record<string, unknown> }>;
  maxStalenessMs?: number;
}): Promise<void> {
  const { t, clock, upstream } = scenario;
  const maxStalenessMs = scenario.maxStalenessMs ?? 86_400_000;
  // Far more than the steps take in real time, and less than the re-check interval.
  const margin = 300_000;
  let current = await scenario.signIn();
  const grantId = grantIdOf(current.access_token);
  const vouchedAt = async () =>
    (await t.server.services.storage.grants.findById(grantId))?.upstream?.validatedAt.getTime();
  const refreshed = async () => {
    const { status, body } = await scenario.refresh(current.refresh_token);
    expect({ status, error: body.error_description }).toEqual({ status: 200, error: undefined });
    current = body as unknown as Tokens;
  };
  const signedIn = await vouchedAt();

  await upstream.down();
  try {
    clock.advance(maxStalenessMs - margin);
    await refreshed();
    expect(await vouchedAt()).toBe(signedIn);

    await upstream.up();
    clock.advance(2 * margin);
    await refreshed();
    const confirmed = (await vouchedAt()) ?? 0;
    expect(confirmed).toBeGreaterThan((signedIn ?? 0) + maxStalenessMs);

    await upstream.down();
    clock.advance(maxStalenessMs - margin);
    await refreshed();
    expect(await reviewedUser(t.issuer, scenario.reviewKey, current.access_token)).not.toBe(
      'not authenticated',
    );
    clock.advance(2 * margin);
    expect(await scenario.refresh(current.refresh_token)).toEqual({
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description: `the identity provider could not confirm the account since ${new Date(confirmed).toISOString()}`,
      },
    });
    expect(await reviewedUser(t.issuer, scenario.reviewKey, current.access_token)).toBe('not authenticated');
    expect(await revalidationEvents(t, scenario.adminKey, grantId)).toEqual([
      { outcome: 'success', reason: 'upstream_unavailable' },
      { outcome: 'success', reason: null },
      { outcome: 'success', reason: 'upstream_unavailable' },
      { outcome: 'failure', reason: 'upstream_unavailable_too_long' },
    ]);
  } finally {
    await upstream.up();
  }
}
