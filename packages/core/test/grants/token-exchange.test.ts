import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { OAuthProtocolError } from '../../src/errors.js';
import type { TokenEndpointContext } from '../../src/grants/context.js';
import { tokenExchangeGrant } from '../../src/grants/token-exchange.js';
import { webCryptoJws } from '../../src/keys/jws-crypto.js';
import { KeyRing } from '../../src/keys/key-ring.js';
import { generateSigningKey } from '../../src/keys/signing-key.js';
import type { ClusterRecord, TrustRecord } from '../../src/model.js';
import { createMemoryStorage, insecureTestPasswordHasher } from '../../src/testing.js';
import { spendAndRecord } from '../../src/trusts/spent.js';
import { ISSUER, manualClock, SECRET } from '../helpers.js';

const CI = 'https://ci.example.test';
const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';

/**
 * The grant over memory storage, a trust with an inline key and one cluster; `failSigning` makes
 * the key ring's signer throw, as a broken signing key would.
 */
async function setup(options: { failSigning?: boolean } = {}) {
  const clock = manualClock();
  const storage = createMemoryStorage();
  const issuerKey = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(issuerKey.publicKey)), kid: 'ci-1' };
  const at = new Date(clock.now());
  const trust: TrustRecord = {
    name: 'ci',
    issuer: CI,
    audience: 'idgate',
    jwks: { keys: [jwk] },
    discoveryUrl: null,
    condition: 'claims.repository == "acme/infra"',
    username: 'ci:{repository}',
    groups: ['deployers'],
    clusters: ['prod'],
    maxTtl: 600,
    createdAt: at,
    updatedAt: at,
  };
  const cluster: ClusterRecord = {
    name: 'prod',
    audience: 'kubernetes:prod',
    requireMfa: false,
    createdAt: at,
  };
  const signing = await generateSigningKey('RS256', SECRET, at);
  const jwsCrypto = options.failSigning
    ? {
        ...webCryptoJws,
        signer: async () => async () => {
          throw new Error('the signing key is unusable');
        },
      }
    : webCryptoJws;
  const ring = await KeyRing.load([signing], SECRET, at, { jwsCrypto });
  const context: TokenEndpointContext = {
    issuer: ISSUER,
    keys: ring,
    clock,
    findClient: async () => undefined,
    passwords: {
      findUserByUsername: async () => undefined,
      hasher: insecureTestPasswordHasher(),
      dummyHash: 'unused',
    },
    storage,
    lifetimes: { idToken: 3600, grant: 86_400, maxAccessToken: 3600 },
  };
  const exchange = {
    trusts: async () => [trust],
    clusters: async () => [cluster],
    keys: { keysFor: async () => ({ ok: true as const, keys: [jwk], source: 'inline' as const }) },
    spend: spendAndRecord(storage),
  };
  let runs = 0;
  const mint = () =>
    new SignJWT({ repository: 'acme/infra', run_id: String(++runs), jti: `job-${runs}` })
      .setProtectedHeader({ alg: 'ES256', kid: 'ci-1' })
      .setIssuer(CI)
      .setAudience('idgate')
      .setSubject('repo:acme/infra')
      .setIssuedAt(Math.floor(clock.now() / 1000))
      .setExpirationTime(Math.floor(clock.now() / 1000) + 300)
      .sign(issuerKey.privateKey);
  const grant = (subjectToken: string) =>
    tokenExchangeGrant(
      {
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: subjectToken,
        subject_token_type: JWT_TYPE,
        audience: 'prod',
      },
      undefined,
      context,
      exchange,
    );
  const events = async () =>
    (await storage.auditEvents.list({ limit: 100, types: ['token.exchanged'] }))
      .map((event): Record<string, unknown> => ({ outcome: event.outcome, ...event.details }))
      .sort((a, b) => String(a.reason).localeCompare(String(b.reason)));
  return { grant, mint, events };
}

describe('token exchange: the subject jti spent and the event stored in one write', () => {
  it('stores the issued token’s event with its jti and lifetime, and a replay’s refusal, before answering', async () => {
    const { grant, mint, events } = await setup();
    const subject = await mint();
    const answer = await grant(subject);
    expect(answer).toMatchObject({ token_type: 'Bearer', expires_in: 300 });
    const issuedJti = JSON.parse(atob(answer.access_token.split('.')[1] as string)).jti;
    const replay = await grant(subject).catch((error: unknown) => error);
    expect(replay).toBeInstanceOf(OAuthProtocolError);
    expect(replay).toMatchObject({ code: 'invalid_grant', message: expect.stringMatching(/used already/) });
    expect(await events()).toEqual([
      expect.objectContaining({
        outcome: 'success',
        subjectJti: 'job-1',
        jti: issuedJti,
        lifetime: 300,
        reason: null,
      }),
      expect.objectContaining({
        outcome: 'failure',
        subjectJti: 'job-1',
        jti: null,
        reason: 'replayed: subject_token was used already (its jti is spent)',
      }),
    ]);
  });

  it('records that no token went out when signing fails after the spend, and keeps the jti spent', async () => {
    const { grant, mint, events } = await setup({ failSigning: true });
    const subject = await mint();
    await expect(grant(subject)).rejects.toThrow('the signing key is unusable');
    const recorded = await events();
    expect(recorded.map((event) => [event.outcome, event.reason])).toEqual([
      ['success', null],
      ['failure', 'signing: the signing key is unusable'],
    ]);
    // The subject token was spent with the first event: it is not accepted a second time.
    await expect(grant(subject)).rejects.toMatchObject({ code: 'invalid_grant' });
  });
});
