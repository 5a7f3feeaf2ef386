import { describe, expect, it } from 'vitest';
import {
  CLIENT_SECRET,
  CODE,
  failure,
  PRESENTED,
  REDIRECT,
  TOKEN,
  useFakeGitHub,
  VERIFIER,
} from './fake-github.js';
import { closedPortUrl, fixture } from './fake-upstream.js';

const { upstream, connector, signIn } = useFakeGitHub();

describe('GitHub failures', () => {
  it('reports a refused code (200 with error) with the plain-text description', async () => {
    upstream.route('POST /login/oauth/access_token', { json: fixture('github-token-error') });
    const error = await failure(signIn(), 'upstream_error');
    expect(error.message).toBe(
      'GitHub refused the sign-in (bad_verification_code: The code passed is incorrect or expired.)',
    );
    expect(upstream.requestsTo('GET /api/v3/user')).toHaveLength(0);
  });

  it('drops a description that repeats a secret or is not plain text', async () => {
    upstream.route('POST /login/oauth/access_token', {
      json: { error: 'incorrect_client_credentials', error_description: `secret ${CLIENT_SECRET} is wrong` },
    });
    expect((await failure(signIn(), 'upstream_error')).message).toBe(
      'GitHub refused the sign-in (incorrect_client_credentials)',
    );
    const refuse = (description: string) =>
      upstream.route('POST /login/oauth/access_token', {
        json: { error: 'x', error_description: description },
      });
    refuse('<script>alert(1)</script>');
    expect((await failure(signIn(), 'upstream_error')).message).toBe('GitHub refused the sign-in (x)');
    refuse('y'.repeat(500));
    const cut = (await failure(signIn(), 'upstream_error')).message;
    expect(cut).toBe(`GitHub refused the sign-in (x: ${'y'.repeat(199)}…)`);
  });

  it('calls a token refused right after the exchange an upstream error', async () => {
    upstream.route('GET /api/v3/user', { status: 401, json: fixture('github-bad-credentials') });
    await failure(signIn(), 'upstream_error');
  });

  it('rejects a token of another type from the exchange', async () => {
    upstream.route('POST /login/oauth/access_token', { json: { access_token: TOKEN, token_type: 'mac' } });
    await failure(signIn(), 'invalid_upstream_response');
  });

  it('reports GitHub down, timing out or failing as unavailable', async () => {
    const down = await closedPortUrl();
    const error = await failure(
      connector({}, undefined, down).exchangeCode({
        code: CODE,
        redirectUri: REDIRECT,
        codeVerifier: VERIFIER,
        nonce: 'n',
      }),
      'upstream_unavailable',
    );
    expect(error.message).toBe('GitHub did not answer');

    upstream.route('GET /api/v3/user', { hang: true });
    const started = Date.now();
    const timeout = connector({}, 200).identityFromAccessToken({
      accessToken: PRESENTED,
      tokenType: 'bearer',
    });
    expect((await failure(timeout, 'upstream_unavailable')).message).toBe('GitHub did not answer');
    expect(Date.now() - started).toBeLessThan(5_000);

    upstream.route('GET /api/v3/user', { status: 502, raw: '<html>Bad Gateway</html>' });
    await failure(signIn(), 'upstream_unavailable');
  });

  it('rejects bodies that are not JSON or not what GitHub documents, saying what is amiss', async () => {
    const refusal = async () => (await failure(signIn(), 'invalid_upstream_response')).message;
    upstream.route('GET /api/v3/user', { raw: '{"login": "octocat", garbage' });
    expect(await refusal()).toBe('GitHub answered the /user request with no JSON');
    upstream.route('GET /api/v3/user', { json: { ...fixture<object>('github-user'), id: '1' } });
    expect(await refusal()).toBe(
      'GitHub answered the /user request unexpectedly (id: Invalid input: expected number, received string)',
    );
    upstream.route('GET /api/v3/user', { json: fixture('github-user') });
    upstream.route('GET /api/v3/user/emails', { json: [{ email: 'a@b.c', primary: true, verified: 'yes' }] });
    expect(await refusal()).toMatch(
      /^GitHub answered the \/user\/emails request unexpectedly \(0\.verified: /,
    );
    upstream.route('GET /api/v3/user/emails', { json: fixture('github-emails') });
    upstream.route('GET /api/v3/user/teams', { json: [{ slug: 'no-org' }] });
    expect(await refusal()).toMatch(
      /^GitHub answered the \/user\/teams request unexpectedly \(0\.organization: /,
    );
    upstream.route('POST /login/oauth/access_token', { raw: `access_token=${TOKEN}&token_type=bearer` });
    expect(await refusal()).toBe('GitHub answered the token request with no JSON');
    upstream.route('POST /login/oauth/access_token', { raw: `{"access_token": "${TOKEN}", "token_type": ` });
    expect(await refusal()).toBe('GitHub answered the token request with no JSON');
    upstream.route('POST /login/oauth/access_token', { json: { token_type: 'bearer', scope: '' } });
    expect(await refusal()).toMatch(/^GitHub answered the token request unexpectedly \(access_token: /);
  });

  it('reports a rate limit (429, or 403 with Retry-After) as unavailable, with the wait', async () => {
    upstream.route('GET /api/v3/user/orgs', {
      status: 429,
      headers: { 'retry-after': '60' },
      json: { message: 'API rate limit exceeded' },
    });
    expect((await failure(signIn(), 'upstream_unavailable')).message).toBe(
      'GitHub is unavailable (HTTP 429); try again in 60 seconds',
    );
    upstream.route('GET /api/v3/user/orgs', {
      status: 403,
      headers: { 'retry-after': '30' },
      json: { message: 'You have exceeded a secondary rate limit' },
    });
    expect((await failure(signIn(), 'upstream_unavailable')).message).toBe(
      'GitHub is unavailable (HTTP 403); try again in 30 seconds',
    );
    upstream.route('POST /login/oauth/access_token', { status: 429, json: { message: 'slow down' } });
    expect((await failure(signIn(), 'upstream_unavailable')).message).toBe(
      'GitHub is unavailable (HTTP 429)',
    );
    expect(upstream.requestsTo('POST /login/oauth/access_token')).toHaveLength(3);
  });

  it('never quotes the code or the verifier back from a refusal', async () => {
    for (const quoted of [CODE, VERIFIER]) {
      upstream.route('POST /login/oauth/access_token', {
        json: { error: 'bad_verification_code', error_description: `The code ${quoted} is wrong` },
      });
      expect((await failure(signIn(), 'upstream_error')).message).toBe(
        'GitHub refused the sign-in (bad_verification_code)',
      );
    }
  });

  it('reports other refusals of the API as upstream errors', async () => {
    upstream.route('GET /api/v3/user/orgs', { status: 403, json: { message: 'Resource not accessible' } });
    expect((await failure(signIn(), 'upstream_error')).message).toBe(
      'GitHub refused the /user/orgs request (HTTP 403)',
    );
  });
});
