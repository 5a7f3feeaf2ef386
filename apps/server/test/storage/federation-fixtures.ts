import type { IdentityProviderRecord, LinkedIdentityRecord, LoginTransactionRecord } from '@idgate/core';
import { at } from './fixtures.js';

export function newIdentityProvider(overrides: Partial<IdentityProviderRecord> = {}): IdentityProviderRecord {
  return {
    name: 'github',
    type: 'github',
    config: {
      name: 'github',
      type: 'github',
      clientId: 'Iv1.0123456789abcdef',
      clientSecret: 'v1.aXY.c2VhbGVk',
      allowedOrganizations: ['acme'],
      loadTeams: true,
    },
    disabled: false,
    createdAt: at('2026-01-01T00:00:00.000Z'),
    updatedAt: at('2026-01-01T00:00:00.000Z'),
    ...overrides,
  };
}

export function newLinkedIdentity(overrides: Partial<LinkedIdentityRecord> = {}): LinkedIdentityRecord {
  return {
    provider: 'github',
    subject: '583231',
    userId: 'u-alice',
    username: 'octocat',
    email: 'octocat@example.com',
    groups: ['github:acme', 'github:acme:platform'],
    linkedAt: at('2026-01-01T10:00:00.000Z'),
    lastLoginAt: null,
    ...overrides,
  };
}

export function newLoginTransaction(overrides: Partial<LoginTransactionRecord> = {}): LoginTransactionRecord {
  return {
    stateHash: 'c3RhdGUtaGFzaA',
    provider: 'github',
    bindingHash: 'YmluZGluZy1oYXNo',
    nonce: 'n-0S6_WzA2Mj',
    codeVerifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
    interactionId: 'i-1',
    createdAt: at('2026-01-01T10:00:00.000Z'),
    expiresAt: at('2026-01-01T10:10:00.000Z'),
    consumedAt: null,
    ...overrides,
  };
}
