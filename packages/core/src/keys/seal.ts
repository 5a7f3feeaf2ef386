import type { JWK } from 'jose';
import { base64url, fromBase64url, utf8 } from '../internal/encoding.js';
import { type Random, webCryptoRandom } from '../ports/runtime.js';

const VERSION = 'v1';
const decoder = new TextDecoder();

async function deriveKey(
  secret: string,
  kid: string,
  purpose = 'idgate signing key seal v1',
): Promise<CryptoKey> {
  if (secret.length < 32) throw new Error('the key encryption secret must be at least 32 characters');
  const material = await crypto.subtle.importKey('raw', utf8(secret), 'HKDF', false, ['deriveKey']);
  return crypto.subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: utf8(purpose), info: utf8(kid) },
    material,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt', 'decrypt'],
  );
}

/**
 * Encrypts a private JWK with AES-256-GCM under a key derived (HKDF-SHA-256) from `secret` and the
 * key id, which is also the associated data, so a sealed key cannot be swapped onto another kid.
 * @example const sealed = await sealPrivateKey(privateJwk, secret, kid);
 */
export async function sealPrivateKey(
  jwk: JWK,
  secret: string,
  kid: string,
  random: Random = webCryptoRandom,
): Promise<string> {
  const iv = random.bytes(12);
  const ciphertext = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: utf8(kid) },
    await deriveKey(secret, kid),
    utf8(JSON.stringify(jwk)),
  );
  return `${VERSION}.${base64url(iv)}.${base64url(new Uint8Array(ciphertext))}`;
}

/**
 * Decrypts what {@link sealPrivateKey} sealed.
 * @throws Error when the secret is wrong or the sealed text was altered.
 * @example const jwk = await openPrivateKey(record.sealedPrivateJwk, secret, record.kid);
 */
export async function openPrivateKey(sealed: string, secret: string, kid: string): Promise<JWK> {
  const [version, iv, ciphertext] = sealed.split('.');
  if (version !== VERSION || iv === undefined || ciphertext === undefined) {
    throw new Error(`signing key ${kid} is not sealed in a known format`);
  }
  try {
    const plain = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: fromBase64url(iv) as Uint8Array<ArrayBuffer>, additionalData: utf8(kid) },
      await deriveKey(secret, kid),
      fromBase64url(ciphertext) as Uint8Array<ArrayBuffer>,
    );
    return JSON.parse(decoder.decode(plain)) as JWK;
  } catch (cause) {
    throw new Error(
      `signing key ${kid} cannot be decrypted: is the configured secret the one it was sealed with?`,
      {
        cause,
      },
    );
  }
}

const TEXT_PURPOSE = 'idgate secret seal v1';

/**
 * Encrypts a secret setting (an upstream client secret, a bind password) for storage, bound to
 * `context` (for example `idp:corp-sso:clientSecret`) so it cannot be moved to another field.
 * @example const sealed = await sealText(clientSecret, secret, 'idp:github:clientSecret');
 */
export async function sealText(
  text: string,
  secret: string,
  context: string,
  random: Random = webCryptoRandom,
): Promise<string> {
  const iv = random.bytes(12);
  const ciphertext = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: utf8(context) },
    await deriveKey(secret, context, TEXT_PURPOSE),
    utf8(text),
  );
  return `${VERSION}.${base64url(iv)}.${base64url(new Uint8Array(ciphertext))}`;
}

/**
 * Decrypts what {@link sealText} sealed for the same context.
 * @throws Error when the secret or the context is wrong, or the text was altered.
 * @example const clientSecret = await openText(sealed, secret, 'idp:github:clientSecret');
 */
export async function openText(sealed: string, secret: string, context: string): Promise<string> {
  const [version, iv, ciphertext] = sealed.split('.');
  if (version !== VERSION || iv === undefined || ciphertext === undefined)
    throw new Error(`${context} is not sealed in a known format`);
  try {
    const plain = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: fromBase64url(iv) as Uint8Array<ArrayBuffer>, additionalData: utf8(context) },
      await deriveKey(secret, context, TEXT_PURPOSE),
      fromBase64url(ciphertext) as Uint8Array<ArrayBuffer>,
    );
    return decoder.decode(plain);
  } catch (cause) {
    throw new Error(`${context} cannot be decrypted: is the configured secret the one it was sealed with?`, {
      cause,
    });
  }
}
