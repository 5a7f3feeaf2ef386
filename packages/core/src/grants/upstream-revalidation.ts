import type { Connector, ExternalIdentity } from '../connectors/types.js';
import { openText, sealText } from '../keys/seal.js';
import type { GrantRecord, GrantUpstream } from '../model.js';
import type { LinkedIdentityRepository } from '../ports/federation-storage.js';
import type { BrowserSessionRepository, GrantRepository } from '../ports/oidc-storage.js';
import type { Clock } from '../ports/runtime.js';
import { providerGroups } from '../sign-in/external.js';

/** The sealing context of a grant's upstream state: bound to the identity it belongs to. */
const sealContext = (provider: string, subject: string) =>
  `grant-upstream:${JSON.stringify([provider, subject])}`;

/**
 * Seals a connector's upstream state (its upstream tokens) for a grant, with the server secret,
 * bound to the provider and subject so it cannot be moved onto another identity's grant.
 * @example const sealedState = await sealUpstreamState(identity.upstreamState, secret, 'corp', identity.subject);
 */
export function sealUpstreamState(state: string, secret: string, provider: string, subject: string) {
  return sealText(state, secret, sealContext(provider, subject));
}

/**
 * The upstream record of a grant opened by a sign-in through `provider` just now.
 * @example const upstream = await grantUpstream('corp', identity, secret, new Date(clock.now()));
 */
export async function grantUpstream(
  provider: string,
  identity: ExternalIdentity,
  secret: string,
  now: Date,
): Promise<GrantUpstream> {
  const state = identity.upstreamState;
  return {
    provider,
    subject: identity.subject,
    validatedAt: now,
    checkedAt: now,
    sealedState:
      state === undefined ? null : await sealUpstreamState(state, secret, provider, identity.subject),
  };
}

/**
 * How long, in seconds, a federated grant goes on refreshing after its provider last vouched for
 * the person while the provider cannot be asked, unless the policy says otherwise: one day.
 * @example createIdgate(ports, { ...policy, revalidateMaxStaleness: DEFAULT_REVALIDATE_MAX_STALENESS / 2 });
 */
export const DEFAULT_REVALIDATE_MAX_STALENESS = 86_400;

/** What re-validation reads and writes. */
export interface UpstreamRevalidationContext {
  clock: Clock;
  /** Seconds between re-checks of one grant; 0 never re-checks. */
  intervalSeconds: number;
  /**
   * Seconds a grant may go on refreshing after the upstream last vouched for the person while the
   * upstream cannot be asked; past them a re-check that finds it unreachable answers
   * `unconfirmed`. Absent or 0: no limit (the grant stands on what is known for as long as it lives).
   */
  maxStalenessSeconds?: number;
  /** The server secret the upstream state is sealed with. */
  secret: string;
  storage: {
    grants: GrantRepository;
    identities: LinkedIdentityRepository;
    /** Where browser sign-ins keep their upstream state, to be told of a rotated token. */
    sessions?: Pick<BrowserSessionRepository, 'replaceUpstreamState'>;
  };
  /** The enabled provider called `name`; undefined when it was removed or disabled. */
  provider(name: string): Promise<{ connector: Connector; groupsPrefix: string } | undefined>;
  /**
   * Hears that the upstream could not be asked: at most once per grant per interval, as the
   * re-check is not tried again before the interval has passed. `reason` holds no secret;
   * `outcome` says whether the grant stands (`unavailable`) or is past the limit (`unconfirmed`).
   */
  onUnavailable?: (grant: GrantRecord, reason: string, outcome: 'unavailable' | 'unconfirmed') => void;
}

/**
 * What re-validation decided: `current` (not due, nothing to check with, or another refresh is
 * checking right now), `revalidated` (the upstream vouched again; the identity's groups, email
 * and username are recorded), `unavailable` (the upstream could not be asked: the grant stands on
 * what is known), `unconfirmed` (the upstream could not be asked and has not vouched for longer
 * than `maxStalenessSeconds`: the caller revokes the grant), `gone` (the upstream no longer knows
 * the person: the caller revokes the grant).
 */
export type UpstreamRevalidation = 'current' | 'revalidated' | 'unavailable' | 'unconfirmed' | 'gone';

/**
 * Re-checks a federated grant's identity upstream when the interval since the last check has
 * passed, as Dex's refresh connectors do. Of concurrent refreshes of one grant only one asks the
 * upstream (a compare-and-set on the check time), so the reuse window of rotated refresh tokens
 * never presents one upstream refresh token twice. A removed or disabled provider can no longer
 * vouch for anyone: `gone`. An upstream that cannot be asked leaves the grant standing on what is
 * known until `maxStalenessSeconds` after it last vouched; from then on every refresh asks (the
 * interval no longer waits) and one it does not answer is `unconfirmed`.
 * @example if ((await revalidateUpstream(grant, context)) === 'gone') await revokeGrant(...);
 */
export async function revalidateUpstream(
  grant: GrantRecord,
  context: UpstreamRevalidationContext,
): Promise<UpstreamRevalidation> {
  const upstream = grant.upstream ?? null;
  if (upstream === null || context.intervalSeconds <= 0) return 'current';
  const now = new Date(context.clock.now());
  const limit = context.maxStalenessSeconds ?? 0;
  // Past the limit a check is due whatever the interval says; only a grant that holds what a
  // re-check needs can be confirmed again, so only such a grant can go unconfirmed.
  const overdue =
    limit > 0 &&
    upstream.sealedState !== null &&
    now.getTime() - upstream.validatedAt.getTime() > limit * 1000;
  if (!overdue && now.getTime() - upstream.checkedAt.getTime() < context.intervalSeconds * 1000)
    return 'current';
  const { grants } = context.storage;
  // Claimed before the upstream is asked: a failure is not retried before the next interval
  // (or, past the limit, the next refresh).
  const claimed = { ...upstream, checkedAt: now };
  if (!(await grants.updateUpstream(grant.id, claimed, upstream.checkedAt))) return 'current';
  const unavailable = (reason: string): UpstreamRevalidation => {
    const outcome = overdue ? 'unconfirmed' : 'unavailable';
    context.onUnavailable?.(grant, reason, outcome);
    return outcome;
  };

  const provider = await context.provider(upstream.provider);
  if (provider === undefined) return 'gone';
  const { connector } = provider;
  if (connector.refresh === undefined || upstream.sealedState === null) return 'current';
  let state: string;
  try {
    state = await openText(
      upstream.sealedState,
      context.secret,
      sealContext(upstream.provider, upstream.subject),
    );
  } catch {
    return unavailable('the upstream state cannot be opened with the configured secret');
  }
  const answer = await connector.refresh({ subject: upstream.subject, state });
  if (answer.status === 'gone') return 'gone';
  if (answer.status === 'unavailable') return unavailable(answer.reason);
  const { identity } = answer;
  // Whatever the connector checked: an answer about someone else never vouches for this grant.
  if (identity.subject !== upstream.subject) return 'gone';
  // As a sign-in records it: the identity's username, email and groups as the provider gives them now.
  if ((await context.storage.identities.find(upstream.provider, upstream.subject)) !== undefined) {
    await context.storage.identities.recordSignIn(upstream.provider, upstream.subject, {
      username: identity.username,
      email: identity.email,
      groups: providerGroups(identity.groups, provider.groupsPrefix),
      at: now,
    });
  }
  const next = identity.upstreamState;
  // The upstream rotated its token: the old one is spent, the new one must be kept.
  const sealedState =
    next === undefined || next === state
      ? upstream.sealedState
      : await sealUpstreamState(next, context.secret, upstream.provider, upstream.subject);
  // Vouched for now: the limit on unconfirmed refreshes counts from here.
  await grants.updateUpstream(grant.id, { ...claimed, validatedAt: now, sealedState }, now);
  if (sealedState !== upstream.sealedState) {
    // The grants and the session of one browser sign-in share its token: the old one is spent
    // for all of them, and a grant left holding it would be refused upstream at its next check.
    const { provider: name, subject, sealedState: spent } = upstream;
    await grants.replaceUpstreamState(name, subject, spent, sealedState);
    await context.storage.sessions?.replaceUpstreamState(name, subject, spent, sealedState);
  }
  return 'revalidated';
}
