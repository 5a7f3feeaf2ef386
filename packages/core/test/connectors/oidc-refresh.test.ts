import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ACCESS_TOKEN, type FakeOidc, startFakeOidc } from './fake-oidc.js';

const REFRESH_TOKEN = 'upstream-rt-0a1b2c3d4e5f';
const state = JSON.stringify({ refreshToken: REFRESH_TOKEN });

let fake: FakeOidc;
beforeEach(async () => {
  fake = await startFakeOidc();
});
afterEach(() => fake.upstream.close());

/** The token endpoint answers a refresh with a fresh ID token (no nonce) and a rotated token. */
async function answerRefresh(claims: Record<string, unknown> = {}) {
  const idToken = await fake.sign({ nonce: undefined, groups: ['platform'], ...claims });
  fake.upstream.route('POST /token', () => ({
    json: {
      access_token: ACCESS_TOKEN,
      token_type: 'Bearer',
      id_token: idToken,
      refresh_token: 'rotated-rt',
    },
  }));
}

describe('OpenID Connect connector re-check (refresh)', () => {
  it('keeps the upstream refresh token of a sign-in as its state', async () => {
    fake.upstream.route('POST /token', () => ({
      json: {
        access_token: ACCESS_TOKEN,
        token_type: 'Bearer',
        id_token: fake.idToken,
        refresh_token: REFRESH_TOKEN,
      },
    }));
    expect((await fake.exchange()).upstreamState).toBe(state);
  });

  it('refreshes upstream and answers the claims of the new ID token, with the rotated token', async () => {
    await answerRefresh();
    const answer = await fake.connector().refresh?.({ subject: 'u-100', state });
    expect(answer).toMatchObject({
      status: 'valid',
      identity: {
        subject: 'u-100',
        groups: ['platform'],
        upstreamState: JSON.stringify({ refreshToken: 'rotated-rt' }),
      },
    });
    const [request] = fake.upstream.requestsTo('POST /token');
    expect(request?.form.get('grant_type')).toBe('refresh_token');
    expect(request?.form.get('refresh_token')).toBe(REFRESH_TOKEN);
  });

  it('is gone when the upstream refuses the refresh token (invalid_grant) or the ID token names another subject', async () => {
    fake.upstream.route('POST /token', () => ({ status: 400, json: { error: 'invalid_grant' } }));
    expect(await fake.connector().refresh?.({ subject: 'u-100', state })).toMatchObject({ status: 'gone' });
    await answerRefresh();
    expect(await fake.connector().refresh?.({ subject: 'u-999', state })).toMatchObject({ status: 'gone' });
  });

  it('is unavailable when the upstream fails or refuses idgate itself (invalid_client): the person is not judged', async () => {
    fake.upstream.route('POST /token', () => ({ status: 503, json: {} }));
    expect(await fake.connector().refresh?.({ subject: 'u-100', state })).toMatchObject({
      status: 'unavailable',
    });
    fake.upstream.route('POST /token', () => ({ status: 401, json: { error: 'invalid_client' } }));
    const refused = await fake.connector().refresh?.({ subject: 'u-100', state });
    expect(refused).toMatchObject({ status: 'unavailable' });
    expect(JSON.stringify(refused)).not.toContain(REFRESH_TOKEN);
  });

  it('is gone when userinfo no longer takes the refreshed access token', async () => {
    await answerRefresh();
    fake.upstream.route('GET /userinfo', () => ({ status: 401, json: { error: 'invalid_token' } }));
    expect(await fake.connector({ useUserinfo: true }).refresh?.({ subject: 'u-100', state })).toMatchObject({
      status: 'gone',
    });
  });
});
