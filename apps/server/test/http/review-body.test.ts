import { TokenReviewRequest } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import { quickTokenReview } from '../../src/routes/oauth/review-body.js';
import { seededRandom } from '../helpers/random.js';

const V1 = 'authentication.k8s.io/v1';
const V1BETA1 = 'authentication.k8s.io/v1beta1';

/** The property: when the quick check answers, zod accepts the body and extracts the very same data. */
function expectAgreement(body: unknown): boolean {
  const quick = quickTokenReview(body);
  const parsed = TokenReviewRequest.safeParse(body);
  if (quick === undefined) return false;
  expect(parsed.success, JSON.stringify(body)).toBe(true);
  expect(quick).toStrictEqual(parsed.data);
  // Same key order too (toStrictEqual ignores it).
  expect(JSON.stringify(quick)).toBe(JSON.stringify(parsed.data));
  return true;
}

// Deterministic, so a failure reproduces.
const random = seededRandom;

const KEYS = [
  'apiVersion',
  'kind',
  'spec',
  'metadata',
  'status',
  'token',
  'audiences',
  'user',
  'username',
  'uid',
  'groups',
  'extra',
  'authenticated',
  'error',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'length',
  '0',
  '',
  'creationTimestamp',
];

/** Random JSON text: valid TokenReview fragments mixed with every kind of wrong value. */
function jsonValue(next: () => number, depth: number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const roll = next();
  if (depth > 4 || roll < 0.35) {
    return pick([
      'null',
      'true',
      'false',
      '0',
      '-1.5e3',
      '""',
      '"x"',
      '"TokenReview"',
      `"${V1}"`,
      `"${V1BETA1}"`,
      '"authentication.k8s.io/v2"',
      '"tokenreview"',
      '" TokenReview"',
      '"eyJhbGciOiJSUzI1NiJ9.e30.c2ln"',
      '"\\u0000"',
      '"__proto__"',
      '{}',
      '[]',
      '[""]',
      '["a","b"]',
      '[null]',
      '[1]',
    ]);
  }
  if (roll < 0.5) {
    const items = Array.from({ length: Math.floor(next() * 4) }, () => jsonValue(next, depth + 1));
    return `[${items.join(',')}]`;
  }
  const entries = Array.from(
    { length: Math.floor(next() * 6) },
    () => `${JSON.stringify(pick(KEYS))}:${jsonValue(next, depth + 1)}`,
  );
  return `{${entries.join(',')}}`;
}

/** A well-formed review with one part replaced by random JSON, or extra keys added. */
function mutatedReview(next: () => number): string {
  const parts: Record<string, string> = {
    apiVersion: JSON.stringify(next() < 0.5 ? V1 : V1BETA1),
    kind: '"TokenReview"',
    spec: next() < 0.5 ? '{"token":"eyJ.x.y"}' : '{"token":"t","audiences":["a","b"]}',
  };
  if (next() < 0.4) parts.metadata = next() < 0.5 ? '{"creationTimestamp":null}' : jsonValue(next, 2);
  if (next() < 0.4) parts.status = next() < 0.5 ? '{"user":{}}' : jsonValue(next, 2);
  const target = KEYS[Math.floor(next() * KEYS.length)] as string;
  const action = next();
  if (action < 0.3) delete parts[target];
  else if (action < 0.7) parts[target] = jsonValue(next, 2);
  else if (parts.spec !== undefined)
    parts.spec = `{"token":"t",${JSON.stringify(target)}:${jsonValue(next, 3)}}`;
  return `{${Object.entries(parts)
    .map(([key, value]) => `${JSON.stringify(key)}:${value}`)
    .join(',')}}`;
}

describe('quickTokenReview', () => {
  it.each([
    ['a v1 review', { apiVersion: V1, kind: 'TokenReview', spec: { token: 'eyJ.x.y' } }],
    ['a v1beta1 review', { apiVersion: V1BETA1, kind: 'TokenReview', spec: { token: 'eyJ.x.y' } }],
    [
      'audiences',
      { apiVersion: V1, kind: 'TokenReview', spec: { token: 't', audiences: ['https://k8s', 'b'] } },
    ],
    ['no token', { apiVersion: V1, kind: 'TokenReview', spec: {} }],
    ['an empty token', { apiVersion: V1, kind: 'TokenReview', spec: { token: '' } }],
    [
      'what kube-apiserver sends (metadata and an empty status)',
      {
        kind: 'TokenReview',
        apiVersion: V1,
        metadata: { creationTimestamp: null },
        spec: { token: 'eyJ.x.y', audiences: ['https://kubernetes.default.svc.cluster.local'] },
        status: { user: {} },
      },
    ],
    [
      'unknown keys, stripped',
      {
        apiVersion: V1,
        kind: 'TokenReview',
        extra: 1,
        spec: { token: 't', other: [1] },
        status: { user: { username: 'a', uid: '1', groups: ['g'], nope: true }, authenticated: false, x: 1 },
      },
    ],
    [
      'a full status',
      {
        apiVersion: V1,
        kind: 'TokenReview',
        spec: { token: 't' },
        status: { authenticated: true, user: {}, audiences: ['a'], error: 'e' },
      },
    ],
    [
      'metadata of any kind, kept as is',
      { apiVersion: V1, kind: 'TokenReview', metadata: { name: 'x', labels: { a: 'b' }, n: [1] }, spec: {} },
    ],
  ])('answers %s exactly as zod does', (_name, body) => {
    expect(expectAgreement(body)).toBe(true);
    expect(expectAgreement(JSON.parse(JSON.stringify(body)))).toBe(true);
  });

  it.each([
    ['not an object', ['[]', 'null', '"TokenReview"', '42', 'true']],
    [
      'a wrong apiVersion or kind',
      [
        `{"apiVersion":"authentication.k8s.io/v2","kind":"TokenReview","spec":{}}`,
        `{"apiVersion":"${V1}","kind":"tokenreview","spec":{}}`,
        `{"kind":"TokenReview","spec":{}}`,
        `{"apiVersion":"${V1}","spec":{}}`,
        `{"apiVersion":["${V1}"],"kind":"TokenReview","spec":{}}`,
      ],
    ],
    [
      'a missing or wrong spec',
      [
        `{"apiVersion":"${V1}","kind":"TokenReview"}`,
        `{"apiVersion":"${V1}","kind":"TokenReview","spec":null}`,
        `{"apiVersion":"${V1}","kind":"TokenReview","spec":[]}`,
        `{"apiVersion":"${V1}","kind":"TokenReview","spec":{"token":42}}`,
        `{"apiVersion":"${V1}","kind":"TokenReview","spec":{"token":null}}`,
        `{"apiVersion":"${V1}","kind":"TokenReview","spec":{"audiences":"a"}}`,
        `{"apiVersion":"${V1}","kind":"TokenReview","spec":{"audiences":["a",1]}}`,
      ],
    ],
    [
      'a wrong metadata or status',
      [
        `{"apiVersion":"${V1}","kind":"TokenReview","spec":{},"metadata":null}`,
        `{"apiVersion":"${V1}","kind":"TokenReview","spec":{},"metadata":[]}`,
        `{"apiVersion":"${V1}","kind":"TokenReview","spec":{},"status":null}`,
        `{"apiVersion":"${V1}","kind":"TokenReview","spec":{},"status":{"authenticated":"yes"}}`,
        `{"apiVersion":"${V1}","kind":"TokenReview","spec":{},"status":{"user":{"groups":[null]}}}`,
      ],
    ],
    [
      'what it leaves to zod (an own __proto__ key, status.user.extra)',
      [
        `{"apiVersion":"${V1}","kind":"TokenReview","spec":{},"metadata":{"__proto__":{"a":1}}}`,
        `{"apiVersion":"${V1}","kind":"TokenReview","spec":{},"status":{"user":{"extra":{}}}}`,
      ],
    ],
  ])('declines %s', (_name, bodies) => {
    for (const text of bodies) expect(quickTokenReview(JSON.parse(text)), text).toBeUndefined();
  });

  it('never disagrees with zod on random hostile bodies', () => {
    const next = random(0x1d6a7e);
    let accepted = 0;
    let rejectedByZod = 0;
    for (let i = 0; i < 20_000; i++) {
      const text = i % 2 === 0 ? mutatedReview(next) : jsonValue(next, 0);
      const body: unknown = JSON.parse(text);
      if (expectAgreement(body)) accepted++;
      else if (!TokenReviewRequest.safeParse(body).success) rejectedByZod++;
    }
    // Both sides were exercised: the check answered often, and zod rejected often.
    expect(accepted).toBeGreaterThan(1_000);
    expect(rejectedByZod).toBeGreaterThan(1_000);
  });

  it('never disagrees with zod on bodies that are not plain JSON', () => {
    const withProto = Object.create({ spec: { token: 'inherited' } }) as Record<string, unknown>;
    withProto.apiVersion = V1;
    withProto.kind = 'TokenReview';
    const nullProto = Object.assign(Object.create(null) as object, {
      apiVersion: V1,
      kind: 'TokenReview',
      spec: { token: 't' },
    });
    for (const body of [
      withProto,
      nullProto,
      { apiVersion: V1, kind: 'TokenReview', spec: { token: undefined } },
      { apiVersion: V1, kind: 'TokenReview', spec: { token: 't' }, metadata: { a: undefined } },
      // biome-ignore lint/suspicious/noSparseArray: a hole is one of the hostile inputs
      { apiVersion: V1, kind: 'TokenReview', spec: { audiences: [, 'a'] } },
      { apiVersion: V1, kind: 'TokenReview', spec: new Map([['token', 't']]) },
      new Date(),
      undefined,
    ]) {
      expectAgreement(body);
    }
  });
});
