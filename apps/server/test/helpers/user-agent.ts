import { createHash, randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';

/**
 * A browser without a browser: fetch with a cookie jar and manual redirects, enough to walk
 * idgate's server-rendered login and consent forms as a person would. (The Chromium test drives
 * the same pages in a real browser.) Requests go through `transport`: the global fetch to a real
 * server, or a test app's `fetch` (through `inject()`).
 */
export class UserAgent {
  readonly cookies = new Map<string, { value: string; path: string }>();

  constructor(readonly transport: typeof fetch = fetch) {}

  #cookieHeader(url: URL): string {
    return [...this.cookies.entries()]
      .filter(([, cookie]) => url.pathname.startsWith(cookie.path))
      .map(([name, cookie]) => `${name}=${cookie.value}`)
      .join('; ');
  }

  #store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const path = attributes.find((a) => a.toLowerCase().startsWith('path='))?.slice(5) ?? '/';
      const maxAge = attributes.find((a) => a.toLowerCase().startsWith('max-age='));
      if (maxAge === 'Max-Age=0' || value === '') this.cookies.delete(name);
      else this.cookies.set(name, { value, path });
    }
  }

  async request(
    url: string | URL,
    init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const target = new URL(url);
    const headers: Record<string, string> = { ...init.headers };
    const cookie = this.#cookieHeader(target);
    if (cookie !== '') headers.cookie = cookie;
    let body: string | undefined;
    if (init.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const response = await this.transport(target, {
      method: init.method ?? (body ? 'POST' : 'GET'),
      headers,
      ...(body === undefined ? {} : { body }),
      redirect: 'manual',
    });
    this.#store(response);
    return response;
  }
}

/** The hidden and named fields of the first form on an HTML page, and its action. */
export function readForm(html: string): { action: string; fields: Record<string, string> } {
  const form = /<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
  if (form === null) throw new Error(`no form on the page:\n${html.slice(0, 500)}`);
  const fields: Record<string, string> = {};
  for (const input of (form[2] as string).matchAll(
    /<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g,
  )) {
    fields[input[1] as string] = unescapeHtml(input[2] as string);
  }
  return { action: unescapeHtml(form[1] as string), fields };
}

function unescapeHtml(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** What {@link signIn} saw on the way. */
export interface SignInResult {
  /** Where idgate finally sent the browser (the client's redirect_uri with code or error). */
  callback: URL;
  sawLogin: boolean;
  sawConsent: boolean;
  /** The consent page as it was shown, when one was. */
  consentPage?: string;
}

/**
 * Follows an authorization request through login and consent until idgate redirects to
 * `redirectPrefix` (the client).
 */
export async function signIn(
  agent: UserAgent,
  authorizationUrl: string | URL,
  options: {
    redirectPrefix: string;
    username?: string;
    password?: string;
    consent?: 'allow' | 'deny';
    /** The code to type on the second-factor page (or to confirm an enrolment), from that page. */
    secondFactor?: (page: string) => string;
    /** Hears the recovery codes shown after an enrolment at sign-in. */
    recoveryCodes?: (codes: string[]) => void;
  },
): Promise<SignInResult> {
  let response = await agent.request(authorizationUrl);
  let sawLogin = false;
  let sawConsent = false;
  let consentPage: string | undefined;
  for (let hop = 0; hop < 10; hop++) {
    const location = response.headers.get('location');
    if (location !== null) {
      const next = new URL(location, response.url || authorizationUrl);
      if (next.toString().startsWith(options.redirectPrefix))
        return {
          callback: next,
          sawLogin,
          sawConsent,
          ...(consentPage === undefined ? {} : { consentPage }),
        };
      response = await agent.request(next);
      continue;
    }
    const html = await response.text();
    if (response.status >= 400 && !html.includes('<form'))
      throw new Error(`idgate answered ${response.status}: ${html.slice(0, 400)}`);
    const { action, fields } = readForm(html);
    const base = new URL(authorizationUrl);
    if (html.includes('name="password"')) {
      if (sawLogin && response.status !== 200) throw new Error(`sign-in failed with ${response.status}`);
      sawLogin = true;
      response = await agent.request(new URL(action, base), {
        form: { ...fields, username: options.username ?? '', password: options.password ?? '' },
      });
    } else if (html.includes('name="decision"')) {
      sawConsent = true;
      consentPage = html;
      response = await agent.request(new URL(action, base), {
        form: { ...fields, decision: options.consent ?? 'allow' },
      });
    } else if (html.includes('name="code"') && options.secondFactor !== undefined) {
      if (response.status !== 200) throw new Error(`second factor refused with ${response.status}`);
      response = await agent.request(new URL(action, base), {
        form: { ...fields, code: options.secondFactor(html) },
      });
    } else if (html.includes('class="recovery-codes"')) {
      options.recoveryCodes?.(
        [...html.matchAll(/<li><code>([^<]+)<\/code><\/li>/g)].map((m) => m[1] as string),
      );
      response = await agent.request(new URL(action, base), { form: fields });
    } else {
      throw new Error(`unexpected page:\n${html.slice(0, 400)}`);
    }
  }
  throw new Error('too many hops');
}

/**
 * An authorization request to `issuer` with `params` and a fresh PKCE S256 challenge: the URL, and the
 * verifier its code must be exchanged with.
 */
export function pkceAuthorizationUrl(
  issuer: string,
  params: Record<string, string>,
): { url: URL; verifier: string } {
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL(`${issuer}/authorize`);
  for (const [name, value] of Object.entries({
    response_type: 'code',
    ...params,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }))
    url.searchParams.set(name, value);
  return { url, verifier };
}

/**
 * What a person does on the device verification page: type `userCode`, sign in with `credentials`,
 * read the confirmation page and decide. Answers the confirmation page and the page after the decision.
 */
export async function decideOnDevicePage(
  issuer: string,
  verificationUri: string,
  userCode: string,
  credentials: { username: string; password: string },
  decision: 'allow' | 'deny' = 'allow',
  /** The code for the second-factor page after the password, from that page. */
  secondFactor?: (page: string) => string,
): Promise<{ confirmation: string; done: string }> {
  const agent = new UserAgent();
  const follow = async (response: Response) => {
    let current = response;
    while (current.status === 303) {
      current = await agent.request(new URL(current.headers.get('location') as string, issuer));
    }
    return current.text();
  };
  const entry = readForm(await (await agent.request(verificationUri)).text());
  const login = readForm(
    await follow(await agent.request(new URL(entry.action, issuer), { form: { user_code: userCode } })),
  );
  let confirmation = await follow(
    await agent.request(new URL(login.action, issuer), { form: { ...login.fields, ...credentials } }),
  );
  if (secondFactor !== undefined && confirmation.includes('name="code"')) {
    const step = readForm(confirmation);
    confirmation = await follow(
      await agent.request(new URL(step.action, issuer), {
        form: { ...step.fields, code: secondFactor(confirmation) },
      }),
    );
  }
  const form = readForm(confirmation);
  const done = await agent.request(new URL(form.action, issuer), { form: { ...form.fields, decision } });
  return { confirmation, done: await done.text() };
}

/**
 * An authorization code flow of openid-client's `config` with PKCE and state: the request (scope
 * `openid offline_access` and `extra`), the sign-in in `agent` (password, and the second factor
 * or enrolment when the page asks), and the code exchanged, the ID token expected.
 */
export async function authorizeWithPassword(
  config: oidc.Configuration,
  agent: UserAgent,
  options: Parameters<typeof signIn>[2] & { redirectUri: string; extra?: Record<string, string> },
): Promise<oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers> {
  const { redirectUri, extra = {}, ...signInOptions } = options;
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid offline_access',
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    ...extra,
  });
  const result = await signIn(agent, url, signInOptions);
  return oidc.authorizationCodeGrant(config, result.callback, {
    pkceCodeVerifier: codeVerifier,
    expectedState: state,
    idTokenExpected: true,
  });
}
