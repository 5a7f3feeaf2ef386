import {
  TOKEN_REVIEW_API_VERSIONS,
  type TokenReviewRequest,
  type TokenReviewSpec,
  type TokenReviewStatus,
  type TokenReviewUser,
} from '@idgate/schema';

// The hand-written mirror of `TokenReviewRequest` (packages/schema/src/token-review.ts) for the
// common well-formed body. Each reader answers what zod's parse would (same checks, same reads:
// `key in value` for presence, `value[key]` for the value; unknown keys stripped, `metadata`
// copied key by key) or `undefined` for anything it does not handle, and then zod decides.
// Declining is always safe; accepting must never disagree with zod: test/http/review-body.test.ts
// checks that against zod on valid and hostile bodies.

type Fields = Record<string, unknown>;

const isFields = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const V1 = TOKEN_REVIEW_API_VERSIONS[0];
const V1BETA1 = TOKEN_REVIEW_API_VERSIONS[1];

/** A copy of an array of strings, like `z.array(z.string())` makes. */
function strings(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const copy = new Array<string>(value.length);
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    if (typeof item !== 'string') return undefined;
    copy[i] = item;
  }
  return copy;
}

/** `z.looseObject({})`: every enumerable key (inherited ones too, as `for…in` yields them). */
function metadata(value: unknown): Fields | undefined {
  if (!isFields(value)) return undefined;
  const copy: Fields = {};
  for (const key in value) {
    // zod skips an own `__proto__` key; leave that oddity to it.
    if (key === '__proto__') return undefined;
    copy[key] = value[key];
  }
  return copy;
}

function spec(value: unknown): TokenReviewSpec | undefined {
  if (!isFields(value)) return undefined;
  const out: TokenReviewSpec = {};
  if ('token' in value) {
    const token = value.token;
    if (typeof token !== 'string') return undefined;
    out.token = token;
  }
  if ('audiences' in value) {
    const audiences = strings(value.audiences);
    if (audiences === undefined) return undefined;
    out.audiences = audiences;
  }
  return out;
}

/** `status.user` without `extra` (a record: zod's business). */
function user(value: unknown): TokenReviewUser | undefined {
  if (!isFields(value) || 'extra' in value) return undefined;
  const out: TokenReviewUser = {};
  if ('username' in value) {
    if (typeof value.username !== 'string') return undefined;
    out.username = value.username;
  }
  if ('uid' in value) {
    if (typeof value.uid !== 'string') return undefined;
    out.uid = value.uid;
  }
  if ('groups' in value) {
    const groups = strings(value.groups);
    if (groups === undefined) return undefined;
    out.groups = groups;
  }
  return out;
}

function status(value: unknown): TokenReviewStatus | undefined {
  if (!isFields(value)) return undefined;
  const out: TokenReviewStatus = {};
  if ('authenticated' in value) {
    if (typeof value.authenticated !== 'boolean') return undefined;
    out.authenticated = value.authenticated;
  }
  if ('user' in value) {
    const reviewed = user(value.user);
    if (reviewed === undefined) return undefined;
    out.user = reviewed;
  }
  if ('audiences' in value) {
    const audiences = strings(value.audiences);
    if (audiences === undefined) return undefined;
    out.audiences = audiences;
  }
  if ('error' in value) {
    if (typeof value.error !== 'string') return undefined;
    out.error = value.error;
  }
  return out;
}

/**
 * The TokenReview in a JSON body, checked without zod: exactly what
 * `TokenReviewRequest.safeParse(body).data` is (same fields, same key order, unknown keys
 * stripped) when it answers, `undefined` when the body is not one it handles (malformed, or an
 * unusual shape such as `status.user.extra`), for `TokenReviewRequest.safeParse` to decide and word
 * the error.
 * @example quickTokenReview({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'eyJ…' } })
 */
export function quickTokenReview(body: unknown): TokenReviewRequest | undefined {
  if (!isFields(body)) return undefined;
  const apiVersion = body.apiVersion;
  if ((apiVersion !== V1 && apiVersion !== V1BETA1) || body.kind !== 'TokenReview') return undefined;
  let meta: Fields | undefined;
  if ('metadata' in body) {
    meta = metadata(body.metadata);
    if (meta === undefined) return undefined;
  }
  const reviewSpec = spec(body.spec);
  if (reviewSpec === undefined) return undefined;
  let reviewStatus: TokenReviewStatus | undefined;
  if ('status' in body) {
    reviewStatus = status(body.status);
    if (reviewStatus === undefined) return undefined;
  }
  // Built in the schema's key order, as zod builds it.
  const review: TokenReviewRequest = { apiVersion, kind: 'TokenReview', spec: reviewSpec };
  if (meta === undefined && reviewStatus === undefined) return review;
  return {
    apiVersion,
    kind: 'TokenReview',
    ...(meta === undefined ? {} : { metadata: meta }),
    spec: reviewSpec,
    ...(reviewStatus === undefined ? {} : { status: reviewStatus }),
  };
}
