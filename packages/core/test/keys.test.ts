import { ProviderMetadata } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import { buildProviderMetadata } from '../src/discovery.js';
import { KeyRing } from '../src/keys/key-ring.js';
import { ensureSigningKey, rotateSigningKey } from '../src/keys/rotation.js';
import { openPrivateKey } from '../src/keys/seal.js';
import { generateSigningKey, signingKeyPhases, signingKeyState } from '../src/keys/signing-key.js';
import type { SigningKeyRecord } from '../src/model.js';
import { createMemoryStorage } from '../src/testing.js';
import { SECRET } from './helpers.js';

describe('signing keys at rest', () => {
  it('seals the private key so that only the configured secret opens it', async () => {
    const record = await generateSigningKey('ES256', SECRET, new Date());
    expect(record.sealedPrivateJwk).not.toContain('"d"');
    const jwk = await openPrivateKey(record.sealedPrivateJwk, SECRET, record.kid);
    expect(jwk.d).toEqual(expect.any(String));
    await expect(openPrivateKey(record.sealedPrivateJwk, `${SECRET}-other`, record.kid)).rejects.toThrow(
      /cannot be decrypted/,
    );
    await expect(openPrivateKey(record.sealedPrivateJwk, SECRET, 'another-kid')).rejects.toThrow(
      /cannot be decrypted/,
    );
  });

  it('refuses a secret shorter than 32 characters', async () => {
    await expect(generateSigningKey('ES256', 'short', new Date())).rejects.toThrow(/at least 32/);
  });

  it('names keys by their RFC 7638 thumbprint and publishes alg and use', async () => {
    const record = await generateSigningKey('EdDSA', SECRET, new Date());
    expect(record.publicJwk).toMatchObject({
      kty: 'OKP',
      crv: 'Ed25519',
      kid: record.kid,
      alg: 'EdDSA',
      use: 'sig',
    });
    expect(record.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('key rotation', () => {
  const policy = { alg: 'ES256' as const, secret: SECRET, maxTokenLifetimeSeconds: 3600 };

  it('creates one key on first start and none after', async () => {
    const storage = createMemoryStorage();
    const now = new Date('2026-11-21T10:00:00Z');
    expect(await ensureSigningKey(storage.signingKeys, policy, now)).toHaveLength(1);
    expect(await ensureSigningKey(storage.signingKeys, policy, now)).toHaveLength(1);
  });

  it('signs with the new key and publishes the retired one until its last token expired', async () => {
    const storage = createMemoryStorage();
    const t0 = new Date('2026-11-21T10:00:00Z');
    const [first] = await ensureSigningKey(storage.signingKeys, policy, t0);
    const t1 = new Date(t0.getTime() + 60_000);
    const { created, retired } = await rotateSigningKey(storage.signingKeys, policy, t1);
    expect(retired).toEqual([first?.kid]);

    const ring = await KeyRing.load(await storage.signingKeys.list(), SECRET, t1);
    expect(ring.signer.kid).toBe(created.kid);
    expect(
      ring
        .jwks()
        .keys.map((k) => k.kid)
        .sort(),
    ).toEqual([created.kid, first?.kid].sort());
    expect(ring.verificationKey(first?.kid as string)).toBeDefined();

    const later = new Date(t1.getTime() + 3600_000);
    const [, old] = await storage.signingKeys.list();
    expect(signingKeyState(old as SigningKeyRecord, new Date(later.getTime() - 1))).toBe('retired');
    expect(signingKeyState(old as SigningKeyRecord, later)).toBe('expired');
    const ringLater = await KeyRing.load(await storage.signingKeys.list(), SECRET, later);
    expect(ringLater.jwks().keys.map((k) => k.kid)).toEqual([created.kid]);
    expect(ringLater.verificationKey(first?.kid as string)).toBeUndefined();
  });

  it('publishes a rotated key before it signs: the old key signs until the activation delay has passed', async () => {
    const storage = createMemoryStorage();
    const delayed = { ...policy, activationDelaySeconds: 10 };
    const t0 = new Date('2026-11-21T10:00:00Z');
    const [first] = await ensureSigningKey(storage.signingKeys, delayed, t0);
    const t1 = new Date(t0.getTime() + 60_000);
    const { created } = await rotateSigningKey(storage.signingKeys, delayed, t1);
    const during = await KeyRing.load(
      await storage.signingKeys.list(),
      SECRET,
      new Date(t1.getTime() + 9_999),
      delayed,
    );
    expect(during.signer.kid).toBe(first?.kid);
    expect(during.jwks().keys.map((k) => k.kid)).toContain(created.kid);
    expect(during.nextChangeAt).toEqual(new Date(t1.getTime() + 10_000));
    const after = await KeyRing.load(
      await storage.signingKeys.list(),
      SECRET,
      new Date(t1.getTime() + 10_000),
      delayed,
    );
    expect(after.signer.kid).toBe(created.kid);
    expect(after.verificationKey(first?.kid as string)).toBeDefined();
    // The old key stays published for a full token lifetime after it stopped signing.
    expect(after.nextChangeAt).toEqual(new Date(t1.getTime() + 10_000 + 3600_000));
  });

  it('a rotation soon after the first start keeps the first key signing: the choice never flips back', async () => {
    const storage = createMemoryStorage();
    const delayed = { ...policy, activationDelaySeconds: 10 };
    const t0 = new Date('2026-11-21T10:00:00Z');
    const [first] = await ensureSigningKey(storage.signingKeys, delayed, t0);
    // Rotated 5 s after the first key was made: neither key has been published for 10 s yet.
    const t1 = new Date(t0.getTime() + 5_000);
    const { created } = await rotateSigningKey(storage.signingKeys, delayed, t1);
    const records = await storage.signingKeys.list();
    for (const [offset, signer] of [
      [0, first?.kid],
      [4_999, first?.kid],
      [5_000, first?.kid],
      [9_999, first?.kid],
      [10_000, created.kid],
    ] as const) {
      const when = new Date(t1.getTime() + offset);
      const ring = await KeyRing.load(records, SECRET, when, delayed);
      expect(ring.signer.kid, `${offset} ms after the rotation`).toBe(signer);
      const phases = signingKeyPhases(records, when, 10);
      expect(phases.get(signer as string)).toBe('active');
      if (signer === first?.kid) expect(phases.get(created.kid)).toBe('next');
    }
  });

  it('tells an operator which key is next, which signs, which is retired and which expired', async () => {
    const { signingKeys } = createMemoryStorage();
    const t0 = new Date('2026-11-23T10:00:00Z');
    const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
    const delayed = { ...policy, maxTokenLifetimeSeconds: 600, activationDelaySeconds: 10 };
    const [first] = await ensureSigningKey(signingKeys, delayed, t0);
    const firstKid = first?.kid as string;
    const phases = async (when: Date) => signingKeyPhases(await signingKeys.list(), when, 10);
    // First start: the only key signs at once.
    expect([...(await phases(t0)).values()]).toEqual(['active']);
    const { created } = await rotateSigningKey(signingKeys, delayed, at(100));
    expect(Object.fromEntries(await phases(at(105)))).toEqual({
      [created.kid]: 'next',
      [firstKid]: 'active',
    });
    expect(Object.fromEntries(await phases(at(110)))).toEqual({
      [created.kid]: 'active',
      [firstKid]: 'retired',
    });
    expect(Object.fromEntries(await phases(at(710)))).toEqual({
      [created.kid]: 'active',
      [firstKid]: 'expired',
    });
  });

  it('will not load without an active key', async () => {
    await expect(KeyRing.load([], SECRET, new Date())).rejects.toThrow(/no active signing key/);
  });
});

describe('OpenID Connect Discovery 1.0 §3', () => {
  it('builds metadata that the schema accepts, every endpoint under the issuer', () => {
    const metadata = buildProviderMetadata({
      issuer: 'https://id.example.test/oauth/',
      signingAlgorithms: ['RS256'],
      grantTypes: ['client_credentials', 'password'],
      tokenEndpointAuthMethods: ['client_secret_basic', 'client_secret_post'],
    });
    expect(ProviderMetadata.parse(metadata)).toEqual(metadata);
    expect(metadata.issuer).toBe('https://id.example.test/oauth');
    expect(metadata.jwks_uri).toBe('https://id.example.test/oauth/keys');
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    expect(metadata).not.toHaveProperty('revocation_endpoint');
    expect(
      buildProviderMetadata({
        ...metadata,
        issuer: metadata.issuer,
        signingAlgorithms: ['RS256'],
        grantTypes: [],
        tokenEndpointAuthMethods: [],
        revocation: true,
      }).revocation_endpoint,
    ).toBe('https://id.example.test/oauth/revoke');
  });
});
