import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import type { Idgate, UserRecord } from '@idgate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, testClock } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';

const origin = { address: '203.0.113.9', userAgent: 'test' };
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest();

/** The few CBOR (RFC 8949) items a WebAuthn authenticator writes: maps, ints, text and bytes. */
function cbor(value: unknown): Buffer {
  const head = (major: number, n: number) =>
    n < 24
      ? Buffer.from([(major << 5) | n])
      : n < 256
        ? Buffer.from([(major << 5) | 24, n])
        : Buffer.from([(major << 5) | 25, n >> 8, n & 255]);
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string')
    return Buffer.concat([head(3, Buffer.byteLength(value)), Buffer.from(value)]);
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  const entries = value instanceof Map ? [...value] : Object.entries(value as object);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

/**
 * A software passkey (ES256), independent of idgate's WebAuthn library: it writes the client data,
 * authenticator data, attestation ("none") and signatures a browser and authenticator would.
 */
class SoftPasskey {
  readonly id = randomBytes(16);
  readonly key: KeyObject;
  readonly cose: Buffer;
  counter = 0;
  constructor(
    readonly rpId: string,
    readonly origin: string,
  ) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.key = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    this.cose = cbor(
      new Map<number, unknown>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x as string, 'base64url')],
        [-3, Buffer.from(jwk.y as string, 'base64url')],
      ]),
    );
  }
  private clientData(type: string, options: Record<string, unknown>, at = this.origin) {
    return Buffer.from(
      JSON.stringify({ type, challenge: options.challenge, origin: at, crossOrigin: false }),
    );
  }
  private authData(flags: number, extra = Buffer.alloc(0), rpId = this.rpId) {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), counter, extra]);
  }
  register(options: Record<string, unknown>): string {
    const attested = Buffer.concat([Buffer.alloc(16), Buffer.from([0, this.id.length]), this.id, this.cose]);
    const authData = this.authData(0x01 | 0x04 | 0x40, attested);
    const attestationObject = cbor({ fmt: 'none', attStmt: {}, authData });
    return JSON.stringify({
      id: b64(this.id),
      rawId: b64(this.id),
      type: 'public-key',
      response: {
        clientDataJSON: b64(this.clientData('webauthn.create', options)),
        attestationObject: b64(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: {},
    });
  }
  assert(
    options: Record<string, unknown>,
    how: { userVerified?: boolean; origin?: string; rpId?: string; counter?: number } = {},
  ): string {
    this.counter = how.counter ?? this.counter + 1;
    const authData = this.authData(0x01 | (how.userVerified === false ? 0 : 0x04), undefined, how.rpId);
    const clientData = this.clientData('webauthn.get', options, how.origin);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.key);
    return JSON.stringify({
      id: b64(this.id),
      rawId: b64(this.id),
      type: 'public-key',
      response: {
        clientDataJSON: b64(clientData),
        authenticatorData: b64(authData),
        signature: b64(signature),
      },
      clientExtensionResults: {},
    });
  }
}

describe.each(testDatabaseUrls())('passkeys (WebAuthn) on $name', (kind) => {
  let t: TestApp;
  const clock = testClock();
  let core: Idgate;
  let users = 0;
  let rp: { id: string; origin: string };
  beforeAll(async () => {
    t = await startTestApp(kind, {}, { clock });
    core = t.server.context.core;
    const issuer = new URL(t.server.context.config.issuer);
    rp = { id: issuer.hostname, origin: issuer.origin };
  });
  afterAll(async () => t?.close());

  async function registered() {
    const username = `user${++users}`;
    const id = await t.addUser(username, 'battery-staple-11f033');
    const user = (await t.server.context.storage.users.findById(id)) as UserRecord;
    const passkey = new SoftPasskey(rp.id, rp.origin);
    const options = await core.factors.startPasskeyRegistration(user, 'i-account');
    expect(options).toMatchObject({
      rp: { id: rp.id },
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    });
    const done = await core.factors.finishPasskeyRegistration(
      user,
      'i-account',
      'laptop',
      passkey.register(options),
      origin,
    );
    expect(done).toMatchObject({ ok: true, recoveryCodes: expect.any(Array) });
    const failures = async () =>
      (
        await t.server.context.storage.auditEvents.list({
          userId: user.id,
          limit: 50,
          types: ['factor.failed'],
        })
      ).map((e) => (e.details as { reason: string }).reason);
    return { user, passkey, failures };
  }

  it('registers a passkey, lists it without key material, and signs in with it alone as MFA', async () => {
    const { user, passkey } = await registered();
    expect(await core.factors.list(user.id)).toEqual([
      {
        id: expect.any(String),
        kind: 'webauthn',
        name: 'laptop',
        createdAt: expect.any(Date),
        lastUsedAt: null,
      },
    ]);
    const options = await core.factors.startPasskeyAssertion(null, 'i-login');
    expect(options).toMatchObject({ rpId: rp.id, userVerification: 'required', allowCredentials: [] });
    const check = await core.factors.verifyPasskey(null, 'i-login', passkey.assert(options), [], origin);
    expect(check).toEqual({
      ok: true,
      userId: user.id,
      factorId: expect.any(String),
      amr: ['hwk', 'user', 'mfa'],
    });
    const second = await core.factors.startPasskeyAssertion(user, 'i-2fa');
    expect(second).toMatchObject({
      userVerification: 'preferred',
      allowCredentials: [{ id: b64(passkey.id) }],
    });
    // As a second factor, user verification is not required.
    expect(
      await core.factors.verifyPasskey(
        user,
        'i-2fa',
        passkey.assert(second, { userVerified: false }),
        ['pwd'],
        origin,
      ),
    ).toMatchObject({ ok: true, amr: ['pwd', 'hwk', 'mfa'] });
  });

  it('refuses a replayed, expired or foreign challenge, another origin or RP ID, and no user verification alone', async () => {
    const { passkey, failures } = await registered();
    const options = await core.factors.startPasskeyAssertion(null, 'i-login');
    const answer = passkey.assert(options);
    expect(await core.factors.verifyPasskey(null, 'i-login', answer, [], origin)).toMatchObject({ ok: true });
    const refused = async (interaction: string, answer: string) =>
      core.factors.verifyPasskey(null, interaction, answer, [], origin);
    expect(await refused('i-login', answer)).toEqual({ ok: false, failure: 'challenge' });
    const other = await core.factors.startPasskeyAssertion(null, 'i-login');
    expect(await refused('i-elsewhere', passkey.assert(other))).toEqual({ ok: false, failure: 'challenge' });
    const late = await core.factors.startPasskeyAssertion(null, 'i-login');
    clock.advance(301_000);
    expect(await refused('i-login', passkey.assert(late))).toEqual({ ok: false, failure: 'challenge' });
    const foreign = await core.factors.startPasskeyAssertion(null, 'i-login');
    expect(await refused('i-login', passkey.assert(foreign, { origin: 'https://evil.example' }))).toEqual({
      ok: false,
      failure: 'origin',
    });
    const rpId = await core.factors.startPasskeyAssertion(null, 'i-login');
    expect(await refused('i-login', passkey.assert(rpId, { rpId: 'evil.example' }))).toEqual({
      ok: false,
      failure: 'origin',
    });
    const unverified = await core.factors.startPasskeyAssertion(null, 'i-login');
    expect(await refused('i-login', passkey.assert(unverified, { userVerified: false }))).toEqual({
      ok: false,
      failure: 'user_verification',
    });
    expect(await failures()).toEqual([
      'challenge',
      'challenge',
      'challenge',
      'origin',
      'origin',
      'user_verification',
    ]);
  });

  it('refuses a counter that does not move forward, and a removed passkey', async () => {
    const { user, passkey, failures } = await registered();
    const first = await core.factors.startPasskeyAssertion(null, 'i-login');
    expect(
      await core.factors.verifyPasskey(null, 'i-login', passkey.assert(first, { counter: 5 }), [], origin),
    ).toMatchObject({
      ok: true,
    });
    const cloned = await core.factors.startPasskeyAssertion(null, 'i-login');
    expect(
      await core.factors.verifyPasskey(null, 'i-login', passkey.assert(cloned, { counter: 5 }), [], origin),
    ).toEqual({ ok: false, failure: 'counter' });
    const [factor] = await core.factors.list(user.id);
    const actor = { kind: 'user' as const, id: user.id, name: user.username };
    expect(await core.factors.remove(user, factor?.id, actor, origin)).toBe(1);
    const gone = await core.factors.startPasskeyAssertion(null, 'i-login');
    expect(await core.factors.verifyPasskey(null, 'i-login', passkey.assert(gone), [], origin)).toEqual({
      ok: false,
      failure: 'unknown_credential',
    });
    expect(await failures()).toEqual(['counter']);
  });
});
