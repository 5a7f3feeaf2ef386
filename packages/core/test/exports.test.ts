import { describe, expect, it } from 'vitest';
import * as core from '../src/index.js';
import * as testing from '../src/testing.js';

describe('public surface of @idgate/core', () => {
  it('keeps in-memory ports and the weak test hasher out of the main entry point', () => {
    expect(Object.keys(core)).not.toContain('createMemoryStorage');
    expect(Object.keys(core)).not.toContain('insecureTestPasswordHasher');
  });

  it('offers the instance, not the pieces it is built from: endpoints and grants are reached through createIdgate', () => {
    expect(typeof core.createIdgate).toBe('function');
    for (const internal of [
      'handleTokenRequest',
      'passwordGrant',
      'refreshTokenGrant',
      'reviewToken',
      'userinfo',
      'introspectToken',
      'signInWithPassword',
      'issueAccessToken',
      'randomBytes',
      'auditEventId',
    ]) {
      expect(Object.keys(core)).not.toContain(internal);
    }
  });

  it('offers them under @idgate/core/testing, with the records the storage contract stores', () => {
    expect(Object.keys(testing).sort()).toEqual([
      'at',
      'createMemoryStorage',
      'insecureTestPasswordHasher',
      'newApiKey',
      'newClient',
      'newCode',
      'newDevice',
      'newGrant',
      'newIdentityProvider',
      'newInteraction',
      'newLinkedIdentity',
      'newLoginAttempt',
      'newLoginTransaction',
      'newRefreshToken',
      'newSession',
      'newSigningKey',
      'newUpstream',
      'newUser',
      'seededRandom',
    ]);
  });

  it('gives key objects no key material: only the kid, the algorithm and the operation', async () => {
    const { keyRing } = await import('./helpers.js');
    const ring = await keyRing('ES256');
    expect(Object.keys(ring.signer).sort()).toEqual(['alg', 'kid', 'sign']);
    expect(Object.keys(ring.verificationKey(ring.signer.kid) ?? {}).sort()).toEqual(['alg', 'kid', 'verify']);
  });
});
