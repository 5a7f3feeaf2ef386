import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashSecret, verifySecret } from '../src/secrets.js';
import { accessTokenHash } from '../src/tokens/id-token.js';

const nodeSha = (text: string, algorithm = 'sha256') => createHash(algorithm).update(text, 'utf8').digest();

describe('secret hashes at rest', () => {
  it('are base64url SHA-256 of the UTF-8 text, as any SHA-256 computes it', async () => {
    for (const text of [
      '',
      'abc',
      'ünïcødé ✓ 𝄞',
      'x'.repeat(1000),
      'idg_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG',
    ]) {
      expect(await hashSecret(text)).toBe(nodeSha(text).toString('base64url'));
    }
    // FIPS 180-2 test vector.
    expect(Buffer.from(await hashSecret('abc'), 'base64url').toString('hex')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('verify only the secret they were made from', async () => {
    const stored = await hashSecret('s3cret');
    expect(await verifySecret('s3cret', stored)).toBe(true);
    expect(await verifySecret('s3cret ', stored)).toBe(false);
    expect(await verifySecret('S3cret', stored)).toBe(false);
    expect(await verifySecret('s3cret', stored.slice(1))).toBe(false);
  });

  it('at_hash is the left half of the signing algorithm hash (OIDC Core §3.1.3.6)', async () => {
    const token = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2ln';
    expect(await accessTokenHash(token, 'RS256')).toBe(nodeSha(token).subarray(0, 16).toString('base64url'));
    expect(await accessTokenHash(token, 'ES256')).toBe(nodeSha(token).subarray(0, 16).toString('base64url'));
    expect(await accessTokenHash(token, 'EdDSA')).toBe(
      nodeSha(token, 'sha512').subarray(0, 32).toString('base64url'),
    );
  });
});
