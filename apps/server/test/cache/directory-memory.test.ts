import type { AccessTokenVerification } from '@idgate/core';
import { createMemoryStorage } from '@idgate/core/testing';
import { describe, expect, it } from 'vitest';
import { LocalChanges } from '../../src/cache/change-log.js';
import { Directory } from '../../src/cache/directory.js';

// What the directory keeps per token is bounded in number and in size: a cluster's token carries
// the person's groups (thousands, possibly), which the review reads from the user record, never
// from the remembered token. The soak in bench/ measures the whole server under 20,000 tokens.

const NOW = Date.parse('2026-11-26T12:00:00Z');

function directory(): Directory {
  return new Directory({
    storage: createMemoryStorage(),
    clock: { now: () => NOW },
    reloadKeys: async () => undefined,
    maxTokenLifetimeSeconds: 3600,
  });
}

function clusterToken(jti: string): AccessTokenVerification {
  return {
    ok: true,
    claims: {
      iss: 'https://id.example.test/oauth',
      sub: 'u1',
      aud: 'kubernetes:prod',
      exp: NOW / 1000 + 600,
      iat: NOW / 1000,
      jti,
      client_id: 'kubectl',
      scope: 'openid groups',
      sid: 'g1',
      auth_time: NOW / 1000,
      acr: 'urn:idgate:mfa',
      amr: ['pwd', 'otp'],
      preferred_username: 'ann',
      groups: Array.from({ length: 5000 }, (_, i) => `idgate:team-${i}`),
    },
    audience: ['kubernetes:prod'],
    scope: ['openid', 'groups'],
  };
}

describe('per-token memory of the directory', () => {
  it('remembers a verified token with the claims core reads, not the user claims it carries', async () => {
    const d = directory();
    await d.start(new LocalChanges());
    let verified = 0;
    const verify = async (token: string) => {
      verified++;
      return clusterToken(token);
    };
    const first = await d.verification('token-1', verify);
    const again = await d.verification('token-1', verify);
    expect(verified).toBe(1);
    expect(again).toBe(first);
    expect(again).toEqual({
      ok: true,
      claims: {
        iss: 'https://id.example.test/oauth',
        sub: 'u1',
        aud: 'kubernetes:prod',
        exp: NOW / 1000 + 600,
        iat: NOW / 1000,
        jti: 'token-1',
        client_id: 'kubectl',
        scope: 'openid groups',
        sid: 'g1',
        auth_time: NOW / 1000,
        acr: 'urn:idgate:mfa',
        amr: ['pwd', 'otp'],
      },
      audience: ['kubernetes:prod'],
      scope: ['openid', 'groups'],
    });
  });

  it('holds at most 20,000 verified tokens: the oldest are verified again', async () => {
    const d = directory();
    await d.start(new LocalChanges());
    const base = clusterToken('');
    if (!base.ok) throw new Error('unreachable');
    const { groups: _groups, ...claims } = base.claims;
    let verified = 0;
    const verify = async (token: string): Promise<AccessTokenVerification> => {
      verified++;
      return { ...base, claims: { ...claims, jti: token } };
    };
    for (let i = 0; i < 20_001; i++) await d.verification(`t${i}`, verify);
    expect(verified).toBe(20_001);
    await d.verification('t20000', verify);
    expect(verified).toBe(20_001);
    await d.verification('t0', verify);
    expect(verified).toBe(20_002);
  });
});
