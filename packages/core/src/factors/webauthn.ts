import { sha256 } from '@noble/hashes/sha2.js';
import { type AuditEventDraft, originFields, type RequestOrigin, recordAuditEvent } from '../audit/record.js';
import { base64url, fromBase64url, utf8 } from '../internal/encoding.js';
import type { FactorRecord, UserRecord } from '../model.js';
import { webCryptoRandom } from '../ports/runtime.js';
import { type Storage, StorageConflictError } from '../ports/storage.js';
import { type AuthenticationMethod, amrOf } from './assurance.js';
import { newRecoveryCodes, recoveryCodeHash } from './recovery-codes.js';
import { FACTOR_NAME_LIMIT, type SecondFactorContext } from './second-factor.js';

/**
 * The WebAuthn relying party idgate is: its RP ID is the issuer's host name, and the only origin
 * it accepts is the issuer's origin.
 */
export interface RelyingParty {
  id: string;
  origin: string;
  name: string;
}

/**
 * The relying party of an issuer.
 * @example relyingPartyOf('https://id.example.com/oauth', 'idgate') // { id: 'id.example.com', origin: 'https://id.example.com', name: 'idgate' }
 */
export function relyingPartyOf(issuer: string, name: string): RelyingParty {
  const url = new URL(issuer);
  return { id: url.hostname, origin: url.origin, name };
}

/**
 * Whether browsers can use passkeys with an issuer: WebAuthn needs a secure context (https, or
 * `localhost`) and a domain as the RP ID, never an IP address. The pages offer no passkey otherwise.
 * @example passkeysPossible('http://127.0.0.1:8080/oauth') // false
 */
export function passkeysPossible(issuer: string): boolean {
  const { protocol, hostname } = new URL(issuer);
  const ip = /^\d+\.\d+\.\d+\.\d+$/.test(hostname) || hostname.startsWith('[');
  const local = hostname === 'localhost' || hostname.endsWith('.localhost');
  return !ip && (protocol === 'https:' || local);
}

/** How long a browser has to answer a WebAuthn challenge, in seconds. */
export const WEBAUTHN_CHALLENGE_SECONDS = 300;

/** What the WebAuthn use cases read and write. */
export type WebAuthnContext = Omit<SecondFactorContext, 'storage'> & {
  storage: SecondFactorContext['storage'] & Pick<Storage, 'users'>;
  relyingParty: RelyingParty;
  /** Loads the WebAuthn library (see {@link WebAuthnLibrary}); none: no passkey ceremony runs. */
  library?: (() => Promise<WebAuthnLibrary>) | undefined;
};

/**
 * Why a WebAuthn ceremony was refused: the challenge unknown, used, expired or issued for another
 * form (`challenge`); the credential unknown or removed (`unknown_credential`); another origin or
 * RP ID (`origin`); no user verification where it is required (`user_verification`); a signature
 * counter that did not move forward (`counter`, a sign of a cloned authenticator); anything else
 * the verification refused (`invalid`).
 */
export type WebAuthnFailure =
  | 'challenge'
  | 'unknown_credential'
  | 'origin'
  | 'user_verification'
  | 'counter'
  | 'invalid';

// A credential JSON the browser sent (RegistrationResponseJSON / AuthenticationResponseJSON).
type CredentialJson = {
  id: string;
  rawId: string;
  type: string;
  response: Record<string, unknown> & { clientDataJSON: string };
  clientExtensionResults?: Record<string, unknown>;
  authenticatorAttachment?: string;
};

const challengeId = (challenge: string) => base64url(sha256(utf8(challenge)));
const decodeText = (encoded: string) => new TextDecoder().decode(fromBase64url(encoded));
const userActor = (user: UserRecord) => ({ kind: 'user' as const, id: user.id, name: user.username });
/**
 * The WebAuthn library core verifies ceremonies with: `@simplewebauthn/server`, which the host
 * loads (its ASN.1 parsers use Node's globals, so core, which runs in browsers and workers too,
 * does not import it): `() => import('@simplewebauthn/server')`, on the first ceremony.
 */
export type WebAuthnLibrary = Pick<
  typeof import('@simplewebauthn/server'),
  | 'generateRegistrationOptions'
  | 'verifyRegistrationResponse'
  | 'generateAuthenticationOptions'
  | 'verifyAuthenticationResponse'
>;

/** The context's library, or an error saying the host gave none. */
const libraryOf = (context: WebAuthnContext): Promise<WebAuthnLibrary> => {
  if (context.library === undefined)
    return Promise.reject(new Error('passkeys need a WebAuthn library: pass ports.webauthn'));
  return context.library();
};

/** Reads the browser's JSON answer; undefined when it is not one. */
function parseCredential(json: string): CredentialJson | undefined {
  try {
    const value = JSON.parse(json) as CredentialJson;
    if (
      typeof value?.id !== 'string' ||
      typeof value.rawId !== 'string' ||
      value.type !== 'public-key' ||
      typeof value.response?.clientDataJSON !== 'string'
    )
      return undefined;
    return { clientExtensionResults: {}, ...value };
  } catch {
    return undefined;
  }
}

/** The client data of an answer: its challenge, origin and type; undefined when unreadable. */
function clientDataOf(
  credential: CredentialJson,
): { challenge: string; origin: string; type: string } | undefined {
  try {
    const data = JSON.parse(decodeText(credential.response.clientDataJSON));
    if (typeof data?.challenge !== 'string' || typeof data.origin !== 'string') return undefined;
    return data as { challenge: string; origin: string; type: string };
  } catch {
    return undefined;
  }
}

/**
 * The flags and counter of authenticator data (WebAuthn §6.1): user present (bit 0), user
 * verified (bit 2), the signature counter (bytes 33–36), and whether its RP ID hash is `rpId`'s.
 */
function authenticatorDataOf(
  encoded: unknown,
  rpId: string,
): { rpMatches: boolean; userVerified: boolean; counter: number } | undefined {
  if (typeof encoded !== 'string') return undefined;
  let data: Uint8Array;
  try {
    data = fromBase64url(encoded);
  } catch {
    return undefined;
  }
  if (data.length < 37) return undefined;
  const expected = sha256(utf8(rpId));
  return {
    rpMatches: expected.every((byte, i) => byte === data[i]),
    userVerified: ((data[32] as number) & 0x04) !== 0,
    counter: new DataView(data.buffer, data.byteOffset + 33, 4).getUint32(0),
  };
}

async function issueChallenge(
  purpose: 'register' | 'authenticate',
  interactionId: string,
  userId: string | null,
  context: WebAuthnContext,
): Promise<Uint8Array<ArrayBuffer>> {
  const bytes = (context.random ?? webCryptoRandom).bytes(32);
  const now = context.clock.now();
  await context.storage.factors.saveChallenge(
    {
      id: challengeId(base64url(bytes)),
      purpose,
      interactionId,
      userId,
      createdAt: new Date(now),
      expiresAt: new Date(now + WEBAUTHN_CHALLENGE_SECONDS * 1000),
    },
    new Date(now),
  );
  return bytes;
}

/** Takes the challenge of an answer: true only for a live one issued for this purpose, form and user. */
async function takeChallenge(
  challenge: string,
  purpose: 'register' | 'authenticate',
  interactionId: string,
  userId: string | null,
  context: WebAuthnContext,
): Promise<boolean> {
  const record = await context.storage.factors.takeChallenge(challengeId(challenge));
  return (
    record !== undefined &&
    record.purpose === purpose &&
    record.interactionId === interactionId &&
    record.userId === userId &&
    record.expiresAt.getTime() > context.clock.now()
  );
}

/**
 * The options for `navigator.credentials.create()` to register a passkey of `user` from the form
 * of `interactionId`: a discoverable credential (resident key required) with user verification
 * required, so it can sign in alone; the user's credentials excluded (one per authenticator).
 * @example const options = await startPasskeyRegistration(user, interaction.id, context);
 */
export async function startPasskeyRegistration(
  user: UserRecord,
  interactionId: string,
  context: WebAuthnContext,
): Promise<Record<string, unknown>> {
  const { generateRegistrationOptions } = await libraryOf(context);
  const existing = (await context.storage.factors.list(user.id)).filter((f) => f.credentialId !== null);
  const options = await generateRegistrationOptions({
    rpName: context.relyingParty.name,
    rpID: context.relyingParty.id,
    userName: user.username,
    userID: utf8(user.id),
    challenge: await issueChallenge('register', interactionId, user.id, context),
    timeout: WEBAUTHN_CHALLENGE_SECONDS * 1000,
    attestationType: 'none',
    excludeCredentials: existing.map((f) => ({
      id: f.credentialId as string,
      transports: (f.transports ?? undefined) as never,
    })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
  return options as unknown as Record<string, unknown>;
}

/** The outcome of registering a passkey. */
export type PasskeyRegistration =
  | { ok: true; factorId: string; recoveryCodes: string[] | null }
  | { ok: false; failure: WebAuthnFailure | 'name_taken' };

/**
 * Verifies the browser's answer to {@link startPasskeyRegistration} and stores the credential as
 * a confirmed factor named `name`; the user's first factor also gets recovery codes (returned
 * once). Records `factor.enrolled` (kind `webauthn`), or `factor.failed` with the reason.
 * @example const done = await finishPasskeyRegistration(user, interaction.id, 'laptop', form.credential, origin, context);
 */
export async function finishPasskeyRegistration(
  user: UserRecord,
  interactionId: string,
  name: string,
  answer: string,
  origin: RequestOrigin,
  context: WebAuthnContext,
): Promise<PasskeyRegistration> {
  if (name.length === 0 || name.length > FACTOR_NAME_LIMIT)
    throw new RangeError(`a factor name has 1 to ${FACTOR_NAME_LIMIT} characters`);
  const { storage, clock, relyingParty } = context;
  const fail = async (failure: WebAuthnFailure | 'name_taken') => {
    await failed(user, 'register', failure, origin, context);
    return { ok: false as const, failure };
  };
  const credential = parseCredential(answer);
  const clientData = credential === undefined ? undefined : clientDataOf(credential);
  if (credential === undefined || clientData === undefined) return fail('invalid');
  if (!(await takeChallenge(clientData.challenge, 'register', interactionId, user.id, context)))
    return fail('challenge');
  if (clientData.origin !== relyingParty.origin) return fail('origin');
  const { verifyRegistrationResponse } = await libraryOf(context);
  let info: Awaited<ReturnType<typeof verifyRegistrationResponse>>['registrationInfo'];
  try {
    const verified = await verifyRegistrationResponse({
      response: credential as never,
      expectedChallenge: clientData.challenge,
      expectedOrigin: relyingParty.origin,
      expectedRPID: relyingParty.id,
      requireUserVerification: true,
    });
    info = verified.verified ? verified.registrationInfo : undefined;
  } catch (error) {
    const message = error instanceof Error ? error.message : '';
    return fail(
      /user verification/i.test(message)
        ? 'user_verification'
        : /rp ?id/i.test(message)
          ? 'origin'
          : 'invalid',
    );
  }
  if (info === undefined) return fail('invalid');
  const names = await storage.factors.list(user.id);
  if (names.some((f) => f.name === name)) return fail('name_taken');
  const now = clock.now();
  const id = crypto.randomUUID();
  const transports = Array.isArray(credential.response.transports)
    ? (credential.response.transports as unknown[]).filter((t): t is string => typeof t === 'string')
    : (info.credential.transports ?? []);
  const record: FactorRecord = {
    id,
    userId: user.id,
    kind: 'webauthn',
    name,
    sealedSecret: base64url(info.credential.publicKey),
    lastUsedStep: info.credential.counter,
    credentialId: info.credential.id,
    transports,
    createdAt: new Date(now),
    confirmedAt: new Date(now),
    lastUsedAt: null,
  };
  try {
    return await storage.transaction(async (tx) => {
      await tx.factors.create(record);
      const events: AuditEventDraft[] = [
        {
          type: 'factor.enrolled',
          actor: userActor(user),
          subject: user.id,
          ...originFields(origin),
          details: { factorId: id, kind: 'webauthn', name },
        },
      ];
      let recoveryCodes: string[] | null = null;
      if ((await tx.factors.recoveryCodesLeft(user.id)) === 0) {
        recoveryCodes = newRecoveryCodes(context.random);
        await tx.factors.replaceRecoveryCodes(user.id, recoveryCodes.map(recoveryCodeHash), new Date(now));
        events.push({
          type: 'recovery-codes.generated',
          actor: userActor(user),
          subject: user.id,
          ...originFields(origin),
          details: { count: recoveryCodes.length },
        });
      }
      await recordAuditEvent(tx, events, clock, context.auditIds);
      return { ok: true as const, factorId: id, recoveryCodes };
    });
  } catch (error) {
    if (!(error instanceof StorageConflictError)) throw error;
    return fail(error.field === 'name' ? 'name_taken' : 'invalid');
  }
}

/**
 * The options for `navigator.credentials.get()` on the form of `interactionId`: for a passkey
 * sign-in (`user` null) any discoverable credential; as the second factor of `user`, that user's
 * credentials. User verification is `required` for a passkey alone (and checked again by
 * {@link verifyPasskeyAssertion}, which says so when it is missing), `preferred` as a second factor.
 * @example const options = await startPasskeyAuthentication(null, interaction.id, context);
 */
export async function startPasskeyAuthentication(
  user: UserRecord | null,
  interactionId: string,
  context: WebAuthnContext,
): Promise<Record<string, unknown>> {
  const { generateAuthenticationOptions } = await libraryOf(context);
  const credentials =
    user === null
      ? []
      : (await context.storage.factors.list(user.id)).filter(
          (f) => f.kind === 'webauthn' && f.credentialId !== null && f.confirmedAt !== null,
        );
  const options = await generateAuthenticationOptions({
    rpID: context.relyingParty.id,
    challenge: await issueChallenge('authenticate', interactionId, user?.id ?? null, context),
    timeout: WEBAUTHN_CHALLENGE_SECONDS * 1000,
    userVerification: user === null ? 'required' : 'preferred',
    allowCredentials: credentials.map((f) => ({
      id: f.credentialId as string,
      transports: (f.transports ?? undefined) as never,
    })),
  });
  return options as unknown as Record<string, unknown>;
}

/** The outcome of a passkey assertion. */
export type PasskeyCheck =
  | { ok: true; userId: string; factorId: string; amr: string[] }
  | { ok: false; failure: WebAuthnFailure };

/**
 * Verifies a passkey assertion from the form of `interactionId`. Alone (`user` null) it finds the
 * user by the credential, requires user verification, and is a multi-factor sign-in by itself:
 * `amr` `hwk` (a hardware-bound key) and `user` (the authenticator verified its user), so `mfa`.
 * After `firstMethods` (`['pwd']`) it must be a credential of `user`; user verification is not
 * required there, and `amr` is `pwd hwk mfa`. The signature counter must move forward unless the
 * authenticator keeps none (0 both times). Records `factor.used` (kind `webauthn`) or
 * `factor.failed` with the reason.
 * @example const check = await verifyPasskeyAssertion(null, interaction.id, form.credential, [], origin, context);
 */
export async function verifyPasskeyAssertion(
  user: UserRecord | null,
  interactionId: string,
  answer: string,
  firstMethods: readonly AuthenticationMethod[],
  origin: RequestOrigin,
  context: WebAuthnContext,
): Promise<PasskeyCheck> {
  const { storage, clock, relyingParty } = context;
  let owner: UserRecord | null = user;
  const fail = async (failure: WebAuthnFailure, factorId?: string) => {
    await failed(owner, 'authenticate', failure, origin, context, factorId);
    return { ok: false as const, failure };
  };
  const credential = parseCredential(answer);
  const clientData = credential === undefined ? undefined : clientDataOf(credential);
  if (credential === undefined || clientData === undefined) return fail('invalid');
  const taken = await takeChallenge(
    clientData.challenge,
    'authenticate',
    interactionId,
    user?.id ?? null,
    context,
  );
  const factor = await storage.factors.findByCredentialId(credential.id);
  const known =
    factor !== undefined && factor.confirmedAt !== null && (user === null || factor.userId === user.id);
  if (known && owner === null) {
    // The credential names its user: a refusal from here on is recorded about them.
    const found = await storage.users.findById(factor.userId);
    if (found !== undefined && !found.disabled) owner = found;
  }
  if (!taken) return fail('challenge', known ? factor.id : undefined);
  if (!known || owner === null) return fail('unknown_credential');
  const data = authenticatorDataOf(credential.response.authenticatorData, relyingParty.id);
  if (data === undefined) return fail('invalid', factor.id);
  if (clientData.origin !== relyingParty.origin || !data.rpMatches) return fail('origin', factor.id);
  if (user === null && !data.userVerified) return fail('user_verification', factor.id);
  const previous = factor.lastUsedStep ?? 0;
  if ((data.counter > 0 || previous > 0) && data.counter <= previous) return fail('counter', factor.id);
  const { verifyAuthenticationResponse } = await libraryOf(context);
  try {
    const verified = await verifyAuthenticationResponse({
      response: credential as never,
      expectedChallenge: clientData.challenge,
      expectedOrigin: relyingParty.origin,
      expectedRPID: relyingParty.id,
      requireUserVerification: user === null,
      credential: {
        id: factor.credentialId as string,
        publicKey: fromBase64url(factor.sealedSecret) as Uint8Array<ArrayBuffer>,
        counter: previous,
        transports: (factor.transports ?? undefined) as never,
      },
    });
    if (!verified.verified) return fail('invalid', factor.id);
  } catch {
    return fail('invalid', factor.id);
  }
  const at = new Date(clock.now());
  // Compare-and-set: of two assertions read at one counter, one wins.
  if (!(await storage.factors.useSignCount(factor.userId, factor.id, previous, data.counter, at)))
    return fail('counter', factor.id);
  await recordAuditEvent(
    storage,
    {
      type: 'factor.used',
      actor: userActor(owner),
      subject: owner.id,
      ...originFields(origin),
      details: { factorId: factor.id, kind: 'webauthn', passwordless: user === null },
    },
    clock,
    context.auditIds,
  );
  const methods: AuthenticationMethod[] = user === null ? ['hwk', 'user'] : [...firstMethods, 'hwk'];
  return { ok: true, userId: owner.id, factorId: factor.id, amr: amrOf(methods) };
}

async function failed(
  user: UserRecord | null,
  ceremony: 'register' | 'authenticate',
  reason: WebAuthnFailure | 'name_taken',
  origin: RequestOrigin,
  context: WebAuthnContext,
  factorId?: string,
): Promise<void> {
  await recordAuditEvent(
    context.storage,
    {
      type: 'factor.failed',
      actor: user === null ? { kind: 'user' as const, id: null } : userActor(user),
      subject: user?.id ?? null,
      ...originFields(origin),
      outcome: 'failure',
      details: {
        kind: 'webauthn' as const,
        ceremony,
        reason,
        ...(factorId === undefined ? {} : { factorId }),
      },
    },
    context.clock,
    context.auditIds,
  );
}
