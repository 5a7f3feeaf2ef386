import { DEVICE_CODE_GRANT_TYPE, DeviceAuthorizationResponse } from '@idgate/schema';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import type { TestServer } from './server.js';
import { readForm, type UserAgent } from './user-agent.js';

/** The tokens a grant answers, and the grant's id (the `sid` of its access token). */
export interface GrantTokens {
  access_token: string;
  refresh_token: string;
  grantId: string;
}

/** A confidential web application's and a device client's grants, driven over HTTP as a browser would. */
export function browserGrants(
  t: TestServer,
  options: {
    reviewKey: string;
    web: { clientId: string; clientSecret: string; redirectUri: string };
    device: { clientId: string };
  },
) {
  const { web, device } = options;
  const basic = `Basic ${btoa(`${web.clientId}:${web.clientSecret}`)}`;

  async function token(form: Record<string, string>, authorization?: string) {
    const response = await fetch(`${t.issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(authorization === undefined ? {} : { authorization }),
      },
      body: new URLSearchParams(form),
    });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  }
  const granted = (body: Record<string, string>): GrantTokens => ({
    access_token: body.access_token as string,
    refresh_token: body.refresh_token as string,
    grantId: decodeJwt(body.access_token as string).sid as string,
  });

  /** Follows redirects (through the upstream too) until a page answers or idgate sends the browser to `stopAt`. */
  async function follow(agent: UserAgent, response: Response, stopAt?: string) {
    let current = response;
    for (let hop = 0; hop < 15; hop++) {
      const location = current.headers.get('location');
      if (location === null) break;
      const next = new URL(location, current.url || t.issuer);
      if (stopAt !== undefined && next.toString().startsWith(stopAt))
        return { response: current, next, html: '' };
      current = await agent.request(next);
    }
    return { response: current, next: undefined, html: await current.text() };
  }

  /**
   * The login page's way through: "Sign in with <provider>" (`via`), or its password form (`password`,
   * with a directory `provider` or none for a local account); on from there, allowing consent.
   */
  async function signInOnPage(
    agent: UserAgent,
    html: string,
    how: { via: string } | { username: string; password: string; provider?: string },
    stopAt?: string,
  ) {
    let page: Awaited<ReturnType<typeof follow>>;
    if ('via' in how) {
      const link = new RegExp(`<a href="([^"]+)">Sign in with ${how.via}</a>`).exec(html)?.[1];
      if (link === undefined) throw new Error(`no ${how.via} button on the page:\n${html.slice(0, 400)}`);
      page = await follow(agent, await agent.request(new URL(link.replace(/&amp;/g, '&'), t.issuer)), stopAt);
    } else {
      const { action, fields } = readForm(html);
      const form = { ...fields, username: how.username, password: how.password };
      const sent = await agent.request(new URL(action, t.issuer), {
        form: how.provider === undefined ? form : { ...form, provider: how.provider },
      });
      page = await follow(agent, sent, stopAt);
    }
    if (page.next === undefined && page.html.includes('name="decision"') && stopAt !== undefined) {
      const { action, fields } = readForm(page.html);
      const allowed = await agent.request(new URL(action, t.issuer), {
        form: { ...fields, decision: 'allow' },
      });
      page = await follow(agent, allowed, stopAt);
    }
    return page;
  }

  /** An authorization request of the web application; `prompt: 'none'` for a silent one. */
  async function authorizationRequest(prompt?: string) {
    const verifier = oidc.randomPKCECodeVerifier();
    const params = new URLSearchParams({
      client_id: web.clientId,
      redirect_uri: web.redirectUri,
      response_type: 'code',
      scope: 'openid groups offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...(prompt === undefined ? {} : { prompt }),
    });
    return { url: `${t.issuer}/authorize?${params}`, verifier };
  }

  async function redeem(callback: URL | undefined, verifier: string): Promise<GrantTokens> {
    const code = callback?.searchParams.get('code');
    if (code == null) throw new Error(`no code in ${callback}`);
    const answer = await token(
      { grant_type: 'authorization_code', code, redirect_uri: web.redirectUri, code_verifier: verifier },
      basic,
    );
    if (answer.status !== 200) throw new Error(`code redemption: ${JSON.stringify(answer)}`);
    return granted(answer.body);
  }

  return {
    /** The authorization code flow, signing in on the login page as `how` says. */
    async codeFlow(agent: UserAgent, how: Parameters<typeof signInOnPage>[2]): Promise<GrantTokens> {
      const request = await authorizationRequest();
      const login = await follow(agent, await agent.request(request.url));
      const done = await signInOnPage(agent, login.html, how, web.redirectUri);
      return redeem(done.next, request.verifier);
    },

    /** A silent authorization (`prompt=none`) answered from the browser's session alone. */
    async silentCodeFlow(agent: UserAgent): Promise<GrantTokens> {
      const request = await authorizationRequest('none');
      const done = await follow(agent, await agent.request(request.url), web.redirectUri);
      return redeem(done.next, request.verifier);
    },

    /**
     * The device flow (RFC 8628): the device asks, the person types the code on the verification
     * page, signs in as `how` says (or with the browser's session, when `how` is omitted), allows,
     * and the device's poll gets the tokens.
     */
    async deviceFlow(agent: UserAgent, how?: Parameters<typeof signInOnPage>[2]): Promise<GrantTokens> {
      const started = await fetch(`${t.issuer}/device_authorization`, {
        method: 'POST',
        body: new URLSearchParams({ client_id: device.clientId, scope: 'openid groups offline_access' }),
      });
      const authorization = DeviceAuthorizationResponse.parse(await started.json());
      const entered = await agent.request(`${t.issuer}/device`, {
        form: { user_code: authorization.user_code },
      });
      let page = await follow(agent, entered);
      if (how !== undefined) page = await signInOnPage(agent, page.html, how);
      if (!page.html.includes('name="decision"'))
        throw new Error(`no confirmation:\n${page.html.slice(0, 400)}`);
      const { action, fields } = readForm(page.html);
      await agent.request(new URL(action, t.issuer), { form: { ...fields, decision: 'allow' } });
      const polled = await token({
        grant_type: DEVICE_CODE_GRANT_TYPE,
        device_code: authorization.device_code,
        client_id: device.clientId,
      });
      if (polled.status !== 200) throw new Error(`device poll: ${JSON.stringify(polled)}`);
      return granted(polled.body);
    },

    /** A refresh by the client the grant belongs to. */
    async refresh(tokens: GrantTokens, client: 'web' | 'device' = 'web') {
      const answer =
        client === 'web'
          ? await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, basic)
          : await token({
              grant_type: 'refresh_token',
              refresh_token: tokens.refresh_token,
              client_id: device.clientId,
            });
      return {
        status: answer.status,
        body: answer.body,
        tokens: answer.status === 200 ? granted(answer.body) : undefined,
      };
    },

    /** The groups TokenReview answers for an access token, or 'not authenticated'. */
    async groupsOf(accessToken: string) {
      const response = await fetch(`${t.issuer}/authenticate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${options.reviewKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          spec: { token: accessToken },
        }),
      });
      const { status } = (await response.json()) as {
        status: { authenticated: boolean; user?: { groups?: string[] } };
      };
      return status.authenticated ? (status.user?.groups ?? []) : 'not authenticated';
    },

    grant: (tokens: GrantTokens) => t.server.services.storage.grants.findById(tokens.grantId),
  };
}
