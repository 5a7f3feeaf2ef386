import { describe, expect, it } from 'vitest';
import { assertMfaFor, clustersNeedingMfa, mfaShortfall, OAuthProtocolError } from '../src/index.js';

const clusters = [
  { name: 'prod', audience: 'kubernetes:prod', requireMfa: true },
  { name: 'live', audience: 'kubernetes:live', requireMfa: true },
  { name: 'dev', audience: 'kubernetes:dev', requireMfa: false },
];

describe('clusters that require a second factor', () => {
  it('names the clusters among an audience that require one', () => {
    expect(clustersNeedingMfa(clusters, ['kubernetes:prod', 'kubernetes:dev'])).toEqual(['prod']);
    expect(clustersNeedingMfa(clusters, ['kubernetes:dev', 'web'])).toEqual([]);
  });

  it('finds no shortfall for an MFA sign-in, and names every cluster for a password-only one', () => {
    const audience = ['kubernetes:prod', 'kubernetes:live'];
    expect(mfaShortfall(clusters, audience, ['pwd', 'otp', 'mfa'])).toBeUndefined();
    expect(mfaShortfall(clusters, audience, ['pwd'])).toBe(
      'clusters prod, live require a sign-in with a second factor (acr urn:idgate:acr:mfa)',
    );
    expect(mfaShortfall(clusters, ['kubernetes:dev'], null)).toBeUndefined();
  });

  it('refuses with invalid_grant telling the client to sign in again with acr_values', () => {
    expect(() => assertMfaFor(clusters, ['kubernetes:prod'], ['pwd', 'otp', 'mfa'])).not.toThrow();
    let thrown: unknown;
    try {
      assertMfaFor(clusters, ['kubernetes:prod'], ['pwd']);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(OAuthProtocolError);
    expect((thrown as OAuthProtocolError).oauthError).toBe('invalid_grant');
    expect((thrown as OAuthProtocolError).message).toContain('acr_values=urn:idgate:acr:mfa');
  });

  it('keeps the step-up contract clients read: invalid_grant, the description ending in " acr_values=<acr>"', () => {
    // kubectl-idgate (apps/kubectl-idgate/src/step-up.ts) and docs/kubernetes/clusters.md rely on it
    for (const audience of [['kubernetes:prod'], ['kubernetes:prod', 'kubernetes:live']]) {
      let thrown: unknown;
      try {
        assertMfaFor(clusters, audience, ['pwd']);
      } catch (error) {
        thrown = error;
      }
      expect((thrown as OAuthProtocolError).oauthError).toBe('invalid_grant');
      expect(/(?:^|\s)acr_values=(\S+)$/.exec((thrown as OAuthProtocolError).message)?.[1]).toBe(
        'urn:idgate:acr:mfa',
      );
    }
  });
});
