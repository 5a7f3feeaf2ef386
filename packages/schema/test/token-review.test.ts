import { describe, expect, it } from 'vitest';
import {
  TOKEN_REVIEW_API_VERSIONS,
  TokenReviewApiVersion,
  TokenReviewRequest,
  TokenReviewResponse,
  TokenReviewSpec,
  TokenReviewStatus,
  TokenReviewUser,
} from '../src/index.js';
import { rejectedAt } from './rejected-at.js';

/** What a kube-apiserver actually POSTs to a webhook token authenticator (note the null and the empty user). */
const apiserverRequest = (apiVersion: string) => ({
  apiVersion,
  kind: 'TokenReview',
  metadata: { creationTimestamp: null },
  spec: { token: 'eyJhbGciOiJSUzI1NiJ9.e30.sig', audiences: ['https://kubernetes.default.svc'] },
  status: { user: {} },
});

/** The authenticated answer from the Kubernetes webhook documentation. */
const authenticated = (apiVersion: string) => ({
  apiVersion,
  kind: 'TokenReview',
  status: {
    authenticated: true,
    user: {
      username: 'janedoe@example.com',
      uid: '42',
      groups: ['developers', 'qa'],
      extra: { extrafield1: ['extravalue1', 'extravalue2'] },
    },
    audiences: ['https://kubernetes.default.svc'],
  },
});

for (const apiVersion of ['authentication.k8s.io/v1', 'authentication.k8s.io/v1beta1'] as const) {
  describe(`TokenReview ${apiVersion}`, () => {
    it('accepts the request a kube-apiserver sends, keeping metadata as is', () => {
      expect(TokenReviewRequest.parse(apiserverRequest(apiVersion))).toEqual({
        apiVersion,
        kind: 'TokenReview',
        metadata: { creationTimestamp: null },
        spec: { token: 'eyJhbGciOiJSUzI1NiJ9.e30.sig', audiences: ['https://kubernetes.default.svc'] },
        status: { user: {} },
      });
    });

    it('accepts an authenticated response with extra as a map of string to string[]', () => {
      const parsed = TokenReviewResponse.parse(authenticated(apiVersion));
      expect(parsed.apiVersion).toBe(apiVersion);
      expect(parsed.status.user?.extra).toEqual({ extrafield1: ['extravalue1', 'extravalue2'] });
      expect(parsed).toEqual(authenticated(apiVersion));
    });

    it('accepts an unauthenticated response carrying only an error', () => {
      const body = {
        apiVersion,
        kind: 'TokenReview',
        status: { authenticated: false, error: 'token expired' },
      };
      expect(TokenReviewResponse.parse(body)).toEqual(body);
    });
  });
}

describe('TokenReview apiVersion and kind', () => {
  it('lists exactly the two API versions', () => {
    expect(TOKEN_REVIEW_API_VERSIONS).toEqual(['authentication.k8s.io/v1', 'authentication.k8s.io/v1beta1']);
    expect(TokenReviewApiVersion.options).toEqual([...TOKEN_REVIEW_API_VERSIONS]);
  });

  it.each([
    'authentication.k8s.io/v2',
    'authentication.k8s.io/v1alpha1',
    'v1',
    'authentication.k8s.io',
    'AUTHENTICATION.K8S.IO/V1',
    '',
  ])('rejects apiVersion %j', (apiVersion) => {
    expect(rejectedAt(TokenReviewApiVersion, apiVersion)).toEqual(['']);
    expect(rejectedAt(TokenReviewRequest, apiserverRequest(apiVersion))).toEqual(['apiVersion']);
    expect(rejectedAt(TokenReviewResponse, authenticated(apiVersion))).toEqual(['apiVersion']);
  });

  it.each(['TokenReviewList', 'tokenreview', 'SubjectAccessReview', ''])('rejects kind %j', (kind) => {
    const request = { ...apiserverRequest('authentication.k8s.io/v1'), kind };
    const response = { ...authenticated('authentication.k8s.io/v1'), kind };
    expect(rejectedAt(TokenReviewRequest, request)).toEqual(['kind']);
    expect(rejectedAt(TokenReviewResponse, response)).toEqual(['kind']);
  });

  it('rejects a missing apiVersion or kind', () => {
    const { apiVersion: _a, ...noApiVersion } = apiserverRequest('authentication.k8s.io/v1');
    const { kind: _k, ...noKind } = apiserverRequest('authentication.k8s.io/v1');
    expect(rejectedAt(TokenReviewRequest, noApiVersion)).toEqual(['apiVersion']);
    expect(rejectedAt(TokenReviewRequest, noKind)).toEqual(['kind']);
  });
});

describe('TokenReview request spec and response status', () => {
  it('requires spec on a request and status on a response', () => {
    expect(
      rejectedAt(TokenReviewRequest, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview' }),
    ).toEqual(['spec']);
    expect(
      rejectedAt(TokenReviewResponse, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: {},
      }),
    ).toEqual(['status']);
  });

  it('TokenReviewSpec accepts an empty spec and rejects non-string tokens and audiences', () => {
    expect(TokenReviewSpec.parse({})).toEqual({});
    expect(rejectedAt(TokenReviewSpec, { token: 42 })).toEqual(['token']);
    expect(rejectedAt(TokenReviewSpec, { audiences: 'https://kubernetes.default.svc' })).toEqual([
      'audiences',
    ]);
    expect(rejectedAt(TokenReviewSpec, { audiences: ['ok', 7] })).toEqual(['audiences.1']);
  });

  it('TokenReviewStatus rejects a string "authenticated"', () => {
    expect(TokenReviewStatus.parse({ authenticated: true })).toEqual({ authenticated: true });
    expect(rejectedAt(TokenReviewStatus, { authenticated: 'true' })).toEqual(['authenticated']);
    expect(rejectedAt(TokenReviewStatus, { error: 500 })).toEqual(['error']);
  });
});

describe('TokenReview status.user (Kubernetes UserInfo)', () => {
  it('accepts an empty user and a full one', () => {
    expect(TokenReviewUser.parse({})).toEqual({});
    const user = {
      username: 'alice',
      uid: 'u1',
      groups: ['dev'],
      extra: { 'idgate.dev/scopes': ['openid', 'profile'] },
    };
    expect(TokenReviewUser.parse(user)).toEqual(user);
  });

  it('accepts extra values that are empty lists', () => {
    expect(TokenReviewUser.parse({ extra: { a: [] } })).toEqual({ extra: { a: [] } });
  });

  it('rejects extra values that are strings rather than string[]', () => {
    expect(rejectedAt(TokenReviewUser, { extra: { 'idgate.dev/scopes': 'openid' } })).toEqual([
      'extra.idgate.dev/scopes',
    ]);
  });

  it('rejects non-string items inside extra values', () => {
    expect(rejectedAt(TokenReviewUser, { extra: { a: ['x', 1] } })).toEqual(['extra.a.1']);
  });

  it('rejects extra as a list and groups as a string', () => {
    expect(rejectedAt(TokenReviewUser, { extra: [['a', 'b']] })).toEqual(['extra']);
    expect(rejectedAt(TokenReviewUser, { groups: 'dev' })).toEqual(['groups']);
  });

  it('rejects a malformed user inside a response at its full path', () => {
    const body = authenticated('authentication.k8s.io/v1');
    const bad = { ...body, status: { ...body.status, user: { ...body.status.user, uid: 42 } } };
    expect(rejectedAt(TokenReviewResponse, bad)).toEqual(['status.user.uid']);
  });
});
