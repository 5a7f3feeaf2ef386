import type { SigningAlgorithm } from '@idgate/schema';
import { KeyRing } from '../src/keys/key-ring.js';
import { generateSigningKey } from '../src/keys/signing-key.js';
import type { ClientRecord } from '../src/model.js';
import type { Clock } from '../src/ports/runtime.js';
import type { Storage } from '../src/ports/storage.js';
import { createMemoryStorage, insecureTestPasswordHasher } from '../src/testing.js';

export const ISSUER = 'https://id.example.test/oauth';
export const SECRET = 'test-secret-that-is-at-least-32-characters-long';

/** A clock a test moves by hand. */
export function manualClock(
  start = Date.parse('2026-11-21T10:00:00Z'),
): Clock & { advance(seconds: number): void } {
  let now = start;
  return {
    now: () => now,
    advance(seconds: number) {
      now += seconds * 1000;
    },
  };
}

export async function keyRing(
  alg: SigningAlgorithm = 'RS256',
  clock: Clock = manualClock(),
): Promise<KeyRing> {
  const record = await generateSigningKey(alg, SECRET, new Date(clock.now()));
  return KeyRing.load([record], SECRET, new Date(clock.now()));
}

export function client(overrides: Partial<ClientRecord> = {}): ClientRecord {
  return {
    clientId: 'cli',
    name: 'CLI',
    secretHash: null,
    public: false,
    trusted: true,
    redirectUris: [],
    postLogoutRedirectUris: [],
    grantTypes: ['password', 'client_credentials'],
    scopes: ['openid', 'profile', 'email', 'groups', 'api'],
    audiences: [],
    accessTokenTtl: 600,
    refreshTokenTtl: 86400,
    createdAt: new Date('2026-01-01T00:00:00Z'),
    ...overrides,
  };
}

export async function seededStorage(): Promise<{
  storage: Storage;
  hasher: ReturnType<typeof insecureTestPasswordHasher>;
}> {
  const storage = createMemoryStorage();
  const hasher = insecureTestPasswordHasher();
  await storage.users.create({
    id: 'u-alice',
    username: 'Alice',
    email: 'alice@example.test',
    displayName: 'Alice A.',
    groups: ['dev', 'ops', 'dev'],
    passwordHash: await hasher.hash('correct horse'),
    createdAt: new Date('2026-01-01T00:00:00Z'),
  });
  return { storage, hasher };
}

const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** A compact JWS over any header and payload (text as is, anything else as JSON), signed by the ring's active key. */
export async function signRaw(ring: KeyRing, header: unknown, payload: unknown): Promise<string> {
  const input = `${b64(header)}.${b64(payload)}`;
  const signature = await ring.signer.sign(new TextEncoder().encode(input));
  return `${input}.${Buffer.from(signature).toString('base64url')}`;
}
