import { createHmac, createPublicKey } from 'node:crypto';
import {
  generateSigningKey,
  type JwsCrypto,
  type JwsSignFunction,
  KeyRing,
  openPrivateKey,
  type SigningKeyRecord,
  signCompactJws,
  verifyCompactJws,
  webCryptoJws,
} from '@idgate/core';
import type { SigningAlgorithm } from '@idgate/schema';
import { CompactSign, importJWK, type JWK, type JWTHeaderParameters, jwtVerify } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeJws, offloadedEcJws } from '../../src/crypto/node-jws.js';

// idgate's hand-written compact JWS verifier, checked against jose on hostile input: every byte of
// a valid token changed, algorithm confusion, `crit`, repeated header members, non-canonical and
// oversize segments, malleated signatures. For every input both must accept or both refuse, and
// agree on the payload when they accept.

const SECRET = 'jws-verification-test-secret-of-32-chars';
const ALGORITHMS = ['RS256', 'ES256', 'EdDSA'] as const;
const NOW = new Date('2026-11-21T10:00:00Z');
const BACKENDS: [string, JwsCrypto][] = [
  ['Web Crypto', webCryptoJws],
  ['node:crypto', nodeJws],
  ['node:crypto, ES256 on the thread pool', offloadedEcJws],
];

const text = new TextEncoder();
const b64 = (data: Uint8Array | string) => Buffer.from(data).toString('base64url');
/** The base64url segment of a JSON value, or of raw JSON text given as a string. */
const seg = (value: unknown) => b64(typeof value === 'string' ? value : JSON.stringify(value));

interface Key {
  record: SigningKeyRecord;
  kid: string;
  alg: SigningAlgorithm;
  sign: JwsSignFunction;
}

interface Verdict {
  ok: boolean;
  /** The payload as JSON text when accepted: both parse the same bytes, so the same text. */
  payload?: string;
}

// RFC 7515 §2 and §7.1: the segments are base64url "with all trailing '=' characters omitted" and
// "without the inclusion of any line breaks, whitespace, or other additional characters" (§5.2
// steps 2, 3 and 7 decode them under that restriction). jose decodes with `atob` on Node.js 20,
// which lets padding and whitespace through; the reference here is jose behind that one rule, and
// the last test shows what the rule takes away.
const COMPACT_SYNTAX = /^[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/;

/**
 * jose's verdict on `token` against the ring's published keys. The key is the one the header's
 * `kid` names (RFC 7515 §4.1.4), as idgate selects it: jose's `createLocalJWKSet` would also try
 * the only key of a type when `kid` is absent, which idgate, whose tokens always carry one, does not.
 */
function joseVerifier(jwks: readonly JWK[]): (token: string) => Promise<Verdict> {
  const imported = new Map<string, ReturnType<typeof importJWK>>();
  const keyFor = async (header: JWTHeaderParameters) => {
    const jwk = typeof header.kid === 'string' ? jwks.find((key) => key.kid === header.kid) : undefined;
    if (jwk?.kid === undefined) throw new Error('no published key has this kid');
    const key = imported.get(jwk.kid) ?? importJWK(structuredClone(jwk));
    imported.set(jwk.kid, key);
    return key;
  };
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, keyFor, { algorithms: [...ALGORITHMS], currentDate: NOW });
      return { ok: true, payload: JSON.stringify(payload) };
    } catch {
      return { ok: false };
    }
  };
}

async function idgateVerdict(ring: KeyRing, token: string): Promise<Verdict> {
  const result = await verifyCompactJws(ring, token);
  return result.ok ? { ok: true, payload: JSON.stringify(result.payload) } : { ok: false };
}

type Case = [name: string, token: string];

interface Comparison {
  disagreements: string[];
  accepted: number;
}

/** Runs both verifiers on every case (64 at a time) and lists where they differ. */
async function compare(
  ring: KeyRing,
  jose: (token: string) => Promise<Verdict>,
  cases: readonly Case[],
): Promise<Comparison> {
  const disagreements: string[] = [];
  let accepted = 0;
  for (let i = 0; i < cases.length; i += 64) {
    await Promise.all(
      cases.slice(i, i + 64).map(async ([name, token]) => {
        const [ours, theirs] = await Promise.all([
          idgateVerdict(ring, token),
          COMPACT_SYNTAX.test(token) ? jose(token) : ({ ok: false } as Verdict),
        ]);
        if (ours.ok !== theirs.ok || ours.payload !== theirs.payload) {
          const show = (v: Verdict) => (v.ok ? `accepts ${v.payload}` : 'refuses');
          disagreements.push(`${name}: idgate ${show(ours)}, jose ${show(theirs)}`);
        }
        if (ours.ok) accepted++;
      }),
    );
  }
  return { disagreements, accepted };
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Every single-character change of `token`: alphabet neighbours, a flipped low bit, and intruders. */
function everyByteFlip(token: string): Case[] {
  const cases: Case[] = [];
  for (let i = 0; i < token.length; i++) {
    const original = token[i] as string;
    const index = BASE64URL.indexOf(original);
    const replacements = new Set([
      ...(index < 0 ? [] : [BASE64URL[(index + 1) % 64] as string, BASE64URL[(index + 63) % 64] as string]),
      String.fromCharCode(original.charCodeAt(0) ^ 1),
      '=',
      '.',
      '+',
      '/',
      ' ',
      '\u00e9',
      '\u0100',
    ]);
    replacements.delete(original);
    for (const replacement of replacements)
      cases.push([
        `byte ${i} ${JSON.stringify(original)}→${JSON.stringify(replacement)}`,
        `${token.slice(0, i)}${replacement}${token.slice(i + 1)}`,
      ]);
  }
  return cases;
}

/** Signs `header.payload` (segments as given, however odd) with `key`. */
async function signOver(key: Key, header: string, payload: string): Promise<string> {
  return `${header}.${payload}.${b64(await key.sign(text.encode(`${header}.${payload}`)))}`;
}

/** `value` with a member added so that its segment's last character has 4 bits no byte uses. */
function slack(value: Record<string, unknown>): Record<string, unknown> {
  for (let n = 0; ; n++)
    if (seg({ ...value, x: 'x'.repeat(n) }).length % 4 === 2) return { ...value, x: 'x'.repeat(n) };
}

/** `segment` (of a length that leaves 4 unused bits) with those bits set: the same bytes decoded. */
function otherTrailingBits(segment: string): string {
  expect(segment.length % 4).toBe(2);
  return segment.slice(0, -1) + (BASE64URL[BASE64URL.indexOf(segment.at(-1) as string) ^ 15] as string);
}

// P-256's group order (FIPS 186-4 D.1.2.3) and Ed25519's (RFC 8032 §5.1).
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const ED25519_L = 2n ** 252n + 27742317777372353535851937790883648493n;
const toBig = (bytes: Uint8Array) => BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
const fromBig = (value: bigint, length: number) =>
  Uint8Array.from(Buffer.from(value.toString(16).padStart(length * 2, '0'), 'hex'));

/** The same signature in other encodings that some verifiers let through. */
function malleated(alg: SigningAlgorithm, signature: Uint8Array): [string, Uint8Array][] {
  if (alg === 'ES256') {
    const r = signature.slice(0, 32);
    const s = toBig(signature.slice(32));
    // ASN.1 DER, as OpenSSL writes ECDSA signatures (JWS wants r‖s, RFC 7518 §3.4).
    const integer = (bytes: Uint8Array) => {
      let trimmed = Array.from(bytes);
      while (trimmed.length > 1 && trimmed[0] === 0 && (trimmed[1] as number) < 0x80)
        trimmed = trimmed.slice(1);
      if ((trimmed[0] as number) >= 0x80) trimmed = [0, ...trimmed];
      return [0x02, trimmed.length, ...trimmed];
    };
    const body = [...integer(r), ...integer(signature.slice(32))];
    return [
      ['ES256 signature as DER', Uint8Array.from([0x30, body.length, ...body])],
      ['ES256 signature with s replaced by n − s', Uint8Array.from([...r, ...fromBig(P256_N - s, 32)])],
      ['ES256 signature with r = 0', Uint8Array.from([...new Uint8Array(32), ...signature.slice(32)])],
      ['ES256 signature with s + n', Uint8Array.from([...r, ...fromBig((s + P256_N) % 2n ** 256n, 32)])],
    ];
  }
  if (alg === 'EdDSA') {
    const s = toBig(signature.slice(32).reverse());
    return [
      [
        'Ed25519 signature with S + L',
        Uint8Array.from([...signature.slice(0, 32), ...fromBig(s + ED25519_L, 32).reverse()]),
      ],
    ];
  }
  return [['RS256 signature with a zero byte in front', Uint8Array.from([0, ...signature])]];
}

function alterations(signature: Uint8Array, other: Uint8Array): [string, Uint8Array][] {
  return [
    ['empty signature', new Uint8Array()],
    ['one byte of signature', signature.slice(0, 1)],
    ['signature one byte short', signature.slice(0, -1)],
    ['signature one byte long', Uint8Array.from([...signature, 0])],
    ['signature twice', Uint8Array.from([...signature, ...signature])],
    ['signature of zeros', new Uint8Array(signature.length)],
    ['signature of 0xff', new Uint8Array(signature.length).fill(0xff)],
    ['signature of another token', other],
  ];
}

const KEYS: Partial<Record<SigningAlgorithm, SigningKeyRecord[]>> = {};

beforeAll(async () => {
  // Two keys of each algorithm: the one under test signs, the other shows a kid pointing elsewhere.
  for (const alg of ALGORITHMS)
    KEYS[alg] = await Promise.all([0, 1].map(() => generateSigningKey(alg, SECRET, NOW)));
});

for (const [backend, jwsCrypto] of BACKENDS) {
  for (const alg of ALGORITHMS) {
    describe(`RFC 7515 JWS verification agrees with jose: ${alg} keys, ${backend}`, () => {
      let ring: KeyRing;
      let jose: (token: string) => Promise<Verdict>;
      let main: Key;
      let sibling: Key;
      const others: Partial<Record<SigningAlgorithm, Key>> = {};
      const payload = { iss: 'https://idgate.test/oauth', sub: 'alice', aud: 'cli', jti: 'j1' };
      let header: Record<string, unknown>;
      let valid: string;
      const check = async (cases: readonly Case[]) => {
        const result = await compare(ring, jose, cases);
        expect(result.disagreements).toEqual([]);
        return result.accepted;
      };

      beforeAll(async () => {
        const [first, second] = KEYS[alg] as [SigningKeyRecord, SigningKeyRecord];
        const otherRecords = ALGORITHMS.filter((a) => a !== alg).map(
          (a) => (KEYS[a] as SigningKeyRecord[])[0] as SigningKeyRecord,
        );
        // The key under test is the newest, so it is the one the ring signs with.
        const records = [...otherRecords, second, first].map((record, i) => ({
          ...record,
          createdAt: new Date(NOW.getTime() - (10 - i) * 1000),
        }));
        ring = await KeyRing.load(records, SECRET, NOW, { jwsCrypto });
        jose = joseVerifier(ring.jwks().keys as JWK[]);
        const load = async (record: SigningKeyRecord): Promise<Key> => {
          const jwk = (await openPrivateKey(record.sealedPrivateJwk, SECRET, record.kid)) as Record<
            string,
            unknown
          >;
          return { record, kid: record.kid, alg: record.alg, sign: await jwsCrypto.signer(jwk, record.alg) };
        };
        main = await load(first);
        sibling = await load(second);
        for (const record of otherRecords) others[record.alg] = await load(record);
        expect(ring.signer.kid).toBe(main.kid);
        header = { alg, kid: main.kid, typ: 'JWT' };
        valid = await signCompactJws(ring.signer, 'JWT', payload);
      });

      it('agrees on every single-character change of a valid token', async () => {
        expect(await idgateVerdict(ring, valid)).toEqual({ ok: true, payload: JSON.stringify(payload) });
        const flips = everyByteFlip(valid);
        expect(flips.length).toBeGreaterThan(valid.length * 7);
        // The last character of the signature has unused low bits: a neighbour of it still decodes
        // to the same signature, and both must accept that.
        expect(await check(flips)).toBeGreaterThan(0);
        // Cut anywhere.
        await check(
          Array.from({ length: valid.length }, (_, i): Case => [`first ${i} characters`, valid.slice(0, i)]),
        );
      });

      it('agrees on algorithm confusion: HMAC with the public key, none, an alg not the key’s, a kid pointing elsewhere', async () => {
        const p = seg(payload);
        const rsa = alg === 'RS256' ? main : (others.RS256 as Key);
        const rsaPublic = createPublicKey({ key: rsa.record.publicJwk, format: 'jwk' });
        const secrets: [string, Uint8Array | string][] = [
          ['the public JWK', JSON.stringify(rsa.record.publicJwk)],
          ['the PEM public key', rsaPublic.export({ type: 'spki', format: 'pem' })],
          ['the DER public key', rsaPublic.export({ type: 'spki', format: 'der' })],
          ['the modulus', Buffer.from(rsa.record.publicJwk.n as string, 'base64url')],
        ];
        const cases: Case[] = [];
        for (const [hmac, hash] of [
          ['HS256', 'sha256'],
          ['HS384', 'sha384'],
          ['HS512', 'sha512'],
        ] as const) {
          for (const kid of new Set([rsa.kid, main.kid])) {
            for (const [what, secret] of secrets) {
              const h = seg({ alg: hmac, kid, typ: 'JWT' });
              const mac = createHmac(hash, secret).update(`${h}.${p}`).digest('base64url');
              cases.push([`${hmac} keyed with ${what} of ${kid}`, `${h}.${p}.${mac}`]);
            }
          }
        }
        const signature = valid.split('.')[2] as string;
        for (const none of ['none', 'None', 'NONE']) {
          const h = seg({ alg: none, kid: main.kid });
          cases.push(
            [`alg ${none}, no signature`, `${h}.${p}.`],
            [`alg ${none}, a valid signature`, `${h}.${p}.${signature}`],
          );
          cases.push([`alg ${none}, signed`, await signOver(main, h, p)]);
        }
        for (const other of Object.values(others) as Key[]) {
          const as = (a: string, kid: string) => seg({ alg: a, kid, typ: 'JWT' });
          cases.push(
            [
              `alg ${other.alg} naming our key, signed by a ${other.alg} key`,
              await signOver(other, as(other.alg, main.kid), p),
            ],
            [
              `alg ${other.alg} naming our key, signed by it`,
              await signOver(main, as(other.alg, main.kid), p),
            ],
            [
              `alg ${alg} naming the ${other.alg} key, signed by ours`,
              await signOver(main, as(alg, other.kid), p),
            ],
            [
              `alg ${alg} naming the ${other.alg} key, signed by it`,
              await signOver(other, as(alg, other.kid), p),
            ],
            [`the ${other.alg} key, properly`, await signOver(other, as(other.alg, other.kid), p)],
          );
        }
        cases.push(
          [
            'kid of the other key of this alg, signed by ours',
            await signOver(main, seg({ ...header, kid: sibling.kid }), p),
          ],
          [
            'kid of the other key of this alg, signed by it',
            await signOver(sibling, seg({ ...header, kid: sibling.kid }), p),
          ],
          ['kid of ours, signed by the other key of this alg', await signOver(sibling, seg(header), p)],
        );
        for (const kid of [
          undefined,
          null,
          42,
          '',
          [main.kid],
          { kid: main.kid },
          `${main.kid} `,
          main.kid.toLowerCase(),
          'unknown',
        ])
          cases.push([`kid ${JSON.stringify(kid)}`, await signOver(main, seg({ ...header, kid }), p)]);
        for (const a of [
          undefined,
          null,
          1,
          '',
          [alg],
          alg.toLowerCase(),
          'PS256',
          'RS384',
          'RS512',
          'ES384',
          'ES512',
          'ES256K',
          'Ed25519',
          'Ed448',
        ])
          cases.push([`alg ${JSON.stringify(a)}`, await signOver(main, seg({ ...header, alg: a }), p)]);
        // Positive controls: the other keys of the ring verify their own tokens.
        expect(await check(cases)).toBe(3);
      });

      it('agrees on crit (RFC 7515 §4.1.11): unknown and known extensions, empty, not an array', async () => {
        const p = seg(payload);
        const headers: [string, Record<string, unknown>][] = [
          ['an unknown extension', { crit: ['exp'], exp: 1 }],
          ['an unknown extension that is absent', { crit: ['exp'] }],
          ['b64 (RFC 7797), true', { crit: ['b64'], b64: true }],
          ['b64, true, listed twice', { crit: ['b64', 'b64'], b64: true }],
          ['b64, false', { crit: ['b64'], b64: false }],
          ['b64, absent', { crit: ['b64'] }],
          ['b64, a string', { crit: ['b64'], b64: 'true' }],
          ['b64, null', { crit: ['b64'], b64: null }],
          ['b64 and an unknown extension', { crit: ['b64', 'exp'], b64: true, exp: 1 }],
          ['a registered parameter', { crit: ['alg'] }],
          ['kid', { crit: ['kid'] }],
          ['an empty array', { crit: [] }],
          ['an empty name', { crit: [''] }],
          ['a number', { crit: [1] }],
          ['a string, not an array', { crit: 'b64', b64: true }],
          ['an object', { crit: { b64: true }, b64: true }],
          ['null', { crit: null }],
          ['false', { crit: false }],
          ['b64 true, not critical', { b64: true }],
          ['b64 false, not critical', { b64: false }],
          ['an extension, not critical', { exp: 1, 'urn:example:ext': true }],
        ];
        const cases: Case[] = [];
        for (const [what, extra] of headers)
          cases.push([`crit: ${what}`, await signOver(main, seg({ ...header, ...extra }), p)]);
        // RFC 7797 §5.2: with b64 false the payload goes unencoded into the signing input.
        const unencoded = seg({ ...header, crit: ['b64'], b64: false });
        cases.push([
          'crit: b64 false, payload unencoded',
          await signOver(main, unencoded, JSON.stringify(payload)),
        ]);
        cases.push(['crit: b64 false, payload base64url', await signOver(main, unencoded, p)]);
        cases.push([
          'crit in the payload',
          await signOver(main, seg(header), seg({ ...payload, crit: ['exp'] })),
        ]);
        expect(await check(cases)).toBe(6);
      });

      it('agrees on repeated JSON members: the last one counts for both (RFC 7515 §5.2 step 4)', async () => {
        const h = (json: string) => seg(json);
        const k = JSON.stringify(main.kid);
        const s = JSON.stringify(sibling.kid);
        const a = JSON.stringify(alg);
        const p = seg(payload);
        const headers: [string, string][] = [
          ['alg none, then ours', `{"alg":"none","alg":${a},"kid":${k}}`],
          ['alg ours, then none', `{"alg":${a},"alg":"none","kid":${k}}`],
          ['alg ours, then HS256', `{"alg":${a},"kid":${k},"alg":"HS256"}`],
          ['kid other, then ours', `{"alg":${a},"kid":${s},"kid":${k}}`],
          ['kid ours, then other', `{"alg":${a},"kid":${k},"kid":${s}}`],
          ['crit unknown, then b64', `{"alg":${a},"kid":${k},"crit":["exp"],"b64":true,"crit":["b64"]}`],
          ['crit b64, then unknown', `{"alg":${a},"kid":${k},"crit":["b64"],"b64":true,"crit":["exp"]}`],
          ['b64 true, then false', `{"alg":${a},"kid":${k},"crit":["b64"],"b64":true,"b64":false}`],
          ['b64 false, then true', `{"alg":${a},"kid":${k},"crit":["b64"],"b64":false,"b64":true}`],
          ['__proto__ holding alg and kid', `{"__proto__":{"alg":${a},"kid":${k}},"typ":"JWT"}`],
          ['__proto__ holding crit', `{"alg":${a},"kid":${k},"__proto__":{"crit":["exp"]}}`],
        ];
        const cases: Case[] = [];
        for (const [what, json] of headers) cases.push([`header: ${what}`, await signOver(main, h(json), p)]);
        const payloads: [string, string][] = [
          ['sub twice', '{"sub":"alice","sub":"mallory"}'],
          ['__proto__', '{"__proto__":{"admin":true},"sub":"alice"}'],
          ['constructor', '{"constructor":{"prototype":{"admin":true}},"sub":"alice"}'],
        ];
        for (const [what, json] of payloads)
          cases.push([`payload: ${what}`, await signOver(main, seg(header), seg(json))]);
        expect(await check(cases)).toBe(8);
      });

      it('agrees on odd segments: trailing bits, empty and extra segments, huge and non-JSON parts, bad UTF-8', async () => {
        const h = seg(slack(header));
        const p = seg(slack(payload));
        const [, , signature] = valid.split('.') as [string, string, string];
        const validPayloadOnly = valid.slice(0, valid.lastIndexOf('.'));
        const bytes = (...values: number[]) => Buffer.from(values).toString('base64url');
        const cases: Case[] = [
          ['header with other trailing bits', await signOver(main, otherTrailingBits(h), p)],
          ['payload with other trailing bits', await signOver(main, h, otherTrailingBits(p))],
          ['signature with other trailing bits', `${validPayloadOnly}.${otherTrailingBits(signature)}`],
          ['nothing', ''],
          ['two dots', '..'],
          ['empty header', `.${p}.${signature}`],
          ['empty header, signed', await signOver(main, '', p)],
          ['empty payload', `${h}..${signature}`],
          ['empty payload, signed', await signOver(main, h, '')],
          ['two segments', validPayloadOnly],
          ['a fourth, empty segment', `${valid}.`],
          ['a fourth segment', `${valid}.${signature}`],
          ['five segments (JWE-shaped)', `${h}.${p}.${p}.${p}.${signature}`],
          ['a dot in the middle of the payload', await signOver(main, h, `${p.slice(0, 8)}.${p.slice(8)}`)],
          ['huge header', await signOver(main, seg({ ...header, pad: 'x'.repeat(200_000) }), p)],
          ['huge payload', await signOver(main, h, seg({ ...payload, pad: 'x'.repeat(200_000) }))],
          [
            'header deeply nested',
            await signOver(
              main,
              seg(
                `{"alg":${JSON.stringify(alg)},"kid":${JSON.stringify(main.kid)},"x":${'['.repeat(5000)}${']'.repeat(5000)}}`,
              ),
              p,
            ),
          ],
          [
            'header JSON with spaces and newlines',
            await signOver(
              main,
              seg(`{ "alg" : ${JSON.stringify(alg)} ,\n "kid" : ${JSON.stringify(main.kid)} }\n`),
              p,
            ),
          ],
          ['header with a byte order mark', await signOver(main, seg(`\ufeff${JSON.stringify(header)}`), p)],
          ['header with non-ASCII', await signOver(main, seg({ ...header, x: 'é日本😀' }), p)],
          [
            'header with an escaped lone surrogate',
            await signOver(
              main,
              seg(`{"alg":${JSON.stringify(alg)},"kid":${JSON.stringify(main.kid)},"x":"\\ud800"}`),
              p,
            ),
          ],
          [
            'header with invalid UTF-8',
            await signOver(
              main,
              b64(
                Buffer.concat([
                  Buffer.from(JSON.stringify(header).slice(0, -1)),
                  Buffer.from(',"x":"\xff"}', 'latin1'),
                ]),
              ),
              p,
            ),
          ],
          [
            'payload with invalid UTF-8',
            await signOver(main, h, bytes(0x7b, 0x22, 0x78, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d)),
          ],
          ['payload with a NUL', await signOver(main, h, seg('{"sub":"a\\u0000b"}'))],
          ['payload with a number out of range', await signOver(main, h, seg('{"sub":"alice","n":1e400}'))],
          ['payload with trailing garbage', await signOver(main, h, seg(`${JSON.stringify(payload)}x`))],
          ['payload {}', await signOver(main, h, seg('{}'))],
        ];
        for (const json of ['[]', '"x"', '1', 'null', 'true', '', 'not json', '{'])
          cases.push(
            [`header ${JSON.stringify(json)}`, await signOver(main, seg(json), p)],
            [`payload ${JSON.stringify(json)}`, await signOver(main, h, seg(json))],
          );
        expect(await check(cases)).toBe(13);
      });

      it('agrees on malleated and altered signatures', async () => {
        const input = valid.slice(0, valid.lastIndexOf('.'));
        const signature = Uint8Array.from(Buffer.from(valid.split('.')[2] as string, 'base64url'));
        const other = await signCompactJws(ring.signer, 'JWT', { ...payload, jti: 'j2' });
        const otherSignature = Uint8Array.from(Buffer.from(other.split('.')[2] as string, 'base64url'));
        const cases = [...malleated(alg, signature), ...alterations(signature, otherSignature)].map(
          ([what, bytes]): Case => [what, `${input}.${b64(bytes)}`],
        );
        // OpenSSL, under both backends and jose, accepts a high-S ECDSA signature (JWS does not
        // require low S): ES256 has one accepted malleation.
        expect(await check(cases)).toBe(alg === 'ES256' ? 1 : 0);
      });

      it('refuses what RFC 7515 §7.1 forbids and jose decodes all the same: padding and whitespace', async () => {
        const h = seg(slack(header));
        const p = seg(slack(payload));
        const lenient: Case[] = [
          ['padded signature', `${valid}==`],
          ['padded header, signed', await signOver(main, `${h}==`, p)],
          ['padded payload, signed', await signOver(main, h, `${p}==`)],
          ['a newline at the end', `${valid}\n`],
          ['a space at the end', `${valid} `],
          ['a line break inside the signature', `${valid.slice(0, -10)}\r\n${valid.slice(-10)}`],
          ['a space inside the header, signed', await signOver(main, `${h.slice(0, 4)} ${h.slice(4)}`, p)],
          ['a tab inside the payload, signed', await signOver(main, h, `${p.slice(0, 4)}\t${p.slice(4)}`)],
        ];
        for (const [name, token] of lenient) {
          expect((await verifyCompactJws(ring, token)).ok, name).toBe(false);
          // Only the rule separates them: jose, left to itself, accepts every one of them.
          expect((await jose(token)).ok, name).toBe(true);
        }
      });
    });
  }
}

describe('RFC 7515 JWS signing matches jose CompactSign', () => {
  for (const [backend, jwsCrypto] of BACKENDS) {
    it(`${backend}: the same bytes for RS256 and EdDSA, the same signing input for ES256`, async () => {
      for (const alg of ALGORITHMS) {
        const record = (KEYS[alg] as SigningKeyRecord[])[0] as SigningKeyRecord;
        const ring = await KeyRing.load([record], SECRET, NOW, { jwsCrypto });
        const claims = {
          iss: 'https://idgate.test/oauth',
          sub: 'alice',
          aud: ['a', 'b'],
          n: 1.5,
          x: 'é😀"\\',
        };
        const ours = await signCompactJws(ring.signer, 'at+jwt', claims);
        const privateJwk = await openPrivateKey(record.sealedPrivateJwk, SECRET, record.kid);
        const theirs = await new CompactSign(text.encode(JSON.stringify(claims)))
          .setProtectedHeader({ alg, kid: record.kid, typ: 'at+jwt' })
          .sign(await importJWK(privateJwk as JWK, alg));
        // PKCS #1 v1.5 and Ed25519 signatures are deterministic; ECDSA's are not (RFC 7518 §3.4).
        if (alg === 'ES256') {
          expect(ours.slice(0, ours.lastIndexOf('.'))).toBe(theirs.slice(0, theirs.lastIndexOf('.')));
          expect((await joseVerifier(ring.jwks().keys as JWK[])(ours)).ok).toBe(true);
        } else {
          expect(ours).toBe(theirs);
        }
      }
    });
  }
});
