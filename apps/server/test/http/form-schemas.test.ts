import { DEVICE_CODE_GRANT_TYPE } from '@idgate/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { type TestDatabaseKind, testDatabaseUrls } from '../helpers/databases.js';
import { readForm, signIn, UserAgent } from '../helpers/user-agent.js';

// The OAuth form routes read their query or form with the schema their OpenAPI description
// shows. These tests hold each route to what its document says, read from /openapi.json: a
// request of only documented fields is carried out; one without a field the document marks
// required is refused with an answer the document lists; so is one that sends a single-valued
// field twice or a value the field's schema refuses (its maxLength, pattern, const or enum),
// and where the route says why in JSON or a redirect, the reason names the field. A parser that
// reads a field by hand, or with another schema than the document's, fails here where the two
// disagree. (A page's own form fields — the CSRF token, the consent decision — read a field they
// cannot take as absent: that refuses the request only where the field is required. The device
// page's form is two in one, the code form and the confirmation form: each is held to the one
// description.)

type Fields = Record<string, string | string[]>;
type Json = Record<string, unknown>;

interface Operation {
  parameters?: Array<{ name: string; in: string; required: boolean; schema: Json }>;
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<string, { content?: Record<string, { schema: Json }> }>;
}

/** A request to a route, ready to send with any fields: the browser's cookies and headers are its own. */
interface Prepared {
  fields: Fields;
  send(fields: Fields): Promise<Response>;
}

interface FormRoute {
  method: 'GET' | 'POST';
  path: string;
  /** Which of the forms the route's one description covers this is (the device page has two). */
  form?: string;
  /** The `grant_type` of the documented alternative (the token endpoint's form is one of several). */
  variant?: string;
  /** A fresh request the route carries out: fields only among the documented ones, the required ones all there. */
  prepare(): Promise<Prepared>;
  /** That the route carried the request out. */
  accepted(response: Response): Promise<void>;
  /** Values of documented optional fields the route takes along with the prepared ones. */
  samples?: () => Fields;
  /** RFC 6749 §3.1: a blank parameter counts as absent (so a blank value refuses nothing). */
  blankIsAbsent: boolean;
  /**
   * The fields of a page's own form: one sent twice, or with a value its schema refuses, is read
   * as absent, which refuses the request only where the field is required. (Every other field
   * follows OAuth's rule: refused.)
   */
  pageFields?: readonly string[];
  /** Where a refusal may go back to the client (the authorization endpoint's redirect). */
  redirectsTo?: string;
}

const REDIRECT = 'https://rp.example.test/cb';
const AFTER = 'https://rp.example.test/bye';
const AUDIENCE = 'https://k8s.example.test';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const PASSWORD = 'battery-staple-a61c0e';

describe('the OAuth form routes read what their OpenAPI description shows', () => {
  let t: TestApp;
  let document: { paths: Record<string, Record<string, Operation>> };
  let web: { clientId: string; clientSecret: string };
  let service: { clientId: string; clientSecret: string };
  let tv: { clientId: string };
  let idToken: string;
  let users = 0;

  const basic = (client: { clientId: string; clientSecret: string }) =>
    `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`;
  const send = (
    method: 'GET' | 'POST',
    url: string,
    fields: Fields,
    headers: Record<string, string> = {},
  ) => {
    const pairs = Object.entries(fields).flatMap(([name, value]) =>
      (Array.isArray(value) ? value : [value]).map((one): [string, string] => [name, one]),
    );
    const encoded = new URLSearchParams(pairs).toString();
    return method === 'GET'
      ? t.fetch(`${url}?${encoded}`, { headers, redirect: 'manual' })
      : t.fetch(url, {
          method,
          headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
          body: encoded,
          redirect: 'manual',
        });
  };
  const sendAs = (agent: UserAgent, method: 'GET' | 'POST', url: string) => (fields: Fields) => {
    const cookie = [...agent.cookies.entries()].map(([name, c]) => `${name}=${c.value}`).join('; ');
    return send(method, url, fields, cookie === '' ? {} : { cookie });
  };
  const accessToken = async () => {
    const response = await send(
      'POST',
      `${t.issuer}/token`,
      { grant_type: 'client_credentials' },
      { authorization: basic(service) },
    );
    return ((await response.json()) as { access_token: string }).access_token;
  };
  const userToken = async () => {
    const username = `form-user-${++users}`;
    await t.addUser(username, PASSWORD);
    const agent = new UserAgent(t.fetch);
    const { callback } = await signIn(agent, authorizeUrl({ scope: 'openid' }), {
      redirectPrefix: REDIRECT,
      username,
      password: PASSWORD,
    });
    const response = await send(
      'POST',
      `${t.issuer}/token`,
      {
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code') as string,
        redirect_uri: REDIRECT,
      },
      { authorization: basic(web) },
    );
    return (await response.json()) as { access_token: string; id_token: string };
  };
  const authorizeUrl = (extra: Record<string, string> = {}) =>
    `${t.issuer}/authorize?${new URLSearchParams({ response_type: 'code', client_id: web.clientId, redirect_uri: REDIRECT, ...extra })}`;
  /** A browser on the login page (standalone) or the consent page of a fresh user: the page's form. */
  const pageForm = async (page: 'login' | 'consent') => {
    const agent = new UserAgent(t.fetch);
    let html = '';
    if (page === 'login') html = await (await agent.request(`${t.issuer}/login`)).text();
    else {
      const username = `form-user-${++users}`;
      await t.addUser(username, PASSWORD);
      const started = await agent.request(authorizeUrl({ scope: 'openid', state: 'st' }));
      const login = readForm(
        await (await agent.request(new URL(started.headers.get('location') as string, t.issuer))).text(),
      );
      const signedIn = await agent.request(new URL(login.action, t.issuer), {
        form: { ...login.fields, username, password: PASSWORD },
      });
      html = await (
        await agent.request(new URL(signedIn.headers.get('location') as string, t.issuer))
      ).text();
    }
    const { action, fields } = readForm(html);
    return { agent, action: new URL(action, t.issuer).toString(), fields };
  };
  /** A device's user code, fresh from the device authorization endpoint. */
  const userCode = async () => {
    const response = await send('POST', `${t.issuer}/device_authorization`, {
      client_id: tv.clientId,
      scope: 'openid',
    });
    return ((await response.json()) as { user_code: string }).user_code;
  };
  /** A browser that entered a user code and signed in: the device confirmation page's form. */
  const deviceConfirmation = async () => {
    const username = `form-user-${++users}`;
    await t.addUser(username, PASSWORD);
    const agent = new UserAgent(t.fetch);
    const follow = async (response: Response) => {
      let next = response;
      while (next.status === 303)
        next = await agent.request(new URL(next.headers.get('location') as string, t.issuer));
      return next.text();
    };
    const login = readForm(
      await follow(await agent.request(`${t.issuer}/device`, { form: { user_code: await userCode() } })),
    );
    const html = await follow(
      await agent.request(new URL(login.action, t.issuer), {
        form: { ...login.fields, username, password: PASSWORD },
      }),
    );
    expect(html).toContain('name="decision"');
    const { action, fields } = readForm(html);
    return { agent, action: new URL(action, t.issuer).toString(), fields };
  };

  const ROUTES: FormRoute[] = [
    ...(['GET', 'POST'] as const).map(
      (method): FormRoute => ({
        method,
        path: '/oauth/authorize',
        prepare: async () => ({
          fields: { response_type: 'code', client_id: web.clientId, redirect_uri: REDIRECT },
          send: (fields) => send(method, `${t.issuer}/authorize`, fields),
        }),
        accepted: async (response) => {
          expect(response.status).toBe(303);
          expect(new URL(response.headers.get('location') as string, t.issuer).pathname).toBe('/oauth/login');
        },
        samples: () => ({
          scope: 'openid',
          state: 's',
          nonce: 'n',
          code_challenge: CHALLENGE,
          code_challenge_method: 'S256',
          response_mode: 'query',
          prompt: 'login',
          max_age: '60',
          login_hint: 'someone',
          resource: [AUDIENCE, AUDIENCE],
        }),
        blankIsAbsent: true,
        redirectsTo: REDIRECT,
      }),
    ),
    {
      method: 'POST',
      path: '/oauth/token',
      variant: 'client_credentials',
      prepare: async () => ({
        fields: { grant_type: 'client_credentials' },
        send: (fields) => send('POST', `${t.issuer}/token`, fields, { authorization: basic(service) }),
      }),
      accepted: async (response) => {
        expect(response.status).toBe(200);
        expect(await response.json()).toHaveProperty('access_token');
      },
      samples: () => ({ scope: 'api', resource: AUDIENCE }),
      blankIsAbsent: true,
    },
    ...(['revoke', 'introspect'] as const).map(
      (endpoint): FormRoute => ({
        method: 'POST',
        path: `/oauth/${endpoint}`,
        prepare: async () => ({
          fields: { token: await accessToken() },
          send: (fields) =>
            send('POST', `${t.issuer}/${endpoint}`, fields, { authorization: basic(service) }),
        }),
        accepted: async (response) => {
          expect(response.status).toBe(200);
          if (endpoint === 'introspect') expect(await response.json()).toMatchObject({ active: true });
        },
        samples: () => ({ token_type_hint: 'access_token' }),
        blankIsAbsent: true,
      }),
    ),
    ...(['GET', 'POST'] as const).map(
      (method): FormRoute => ({
        method,
        path: '/oauth/userinfo',
        prepare: async () => {
          const token = (await userToken()).access_token;
          return {
            fields: {},
            send: (fields) =>
              send(method, `${t.issuer}/userinfo`, fields, { authorization: `Bearer ${token}` }),
          };
        },
        accepted: async (response) => {
          expect(response.status).toBe(200);
          expect(await response.json()).toHaveProperty('sub');
        },
        blankIsAbsent: true,
      }),
    ),
    {
      method: 'POST',
      path: '/oauth/login',
      prepare: async () => {
        const username = `form-user-${++users}`;
        await t.addUser(username, PASSWORD);
        const { agent, action, fields } = await pageForm('login');
        return { fields: { ...fields, username, password: PASSWORD }, send: sendAs(agent, 'POST', action) };
      },
      accepted: async (response) => {
        expect(response.status).toBe(200);
        expect(await response.text()).toContain('You are signed in as form-user-');
      },
      blankIsAbsent: false,
      pageFields: ['interaction', 'csrf', 'username', 'password', 'provider'],
    },
    {
      method: 'POST',
      path: '/oauth/consent',
      prepare: async () => {
        const { agent, action, fields } = await pageForm('consent');
        return { fields, send: sendAs(agent, 'POST', action) };
      },
      accepted: async (response) => {
        expect(response.status).toBe(303);
        expect(response.headers.get('location')).toMatch(/^https:\/\/rp\.example\.test\/cb\?.*state=st/);
      },
      samples: () => ({ decision: 'allow' }),
      blankIsAbsent: false,
      pageFields: ['interaction', 'csrf', 'decision'],
    },
    {
      method: 'GET',
      path: '/oauth/login',
      prepare: async () => {
        const agent = new UserAgent(t.fetch);
        const started = await agent.request(authorizeUrl({ scope: 'openid' }));
        const login = new URL(started.headers.get('location') as string, t.issuer);
        return {
          fields: { interaction: login.searchParams.get('interaction') as string },
          send: sendAs(agent, 'GET', `${t.issuer}/login`),
        };
      },
      accepted: async (response) => {
        expect(response.status).toBe(200);
        expect(await response.text()).toContain('name="password"');
      },
      blankIsAbsent: false,
    },
    {
      method: 'GET',
      path: '/oauth/device',
      prepare: async () => {
        const { agent, fields } = await deviceConfirmation();
        return {
          fields: { interaction: fields.interaction as string },
          send: sendAs(agent, 'GET', `${t.issuer}/device`),
        };
      },
      accepted: async (response) => {
        expect(response.status).toBe(200);
        expect(await response.text()).toContain('name="decision" value="allow"');
      },
      samples: () => ({ user_code: 'BCDF-GHJK' }),
      blankIsAbsent: false,
      // Only prefills the code form (and there is none with an interaction).
      pageFields: ['user_code'],
    },
    {
      method: 'POST',
      path: '/oauth/device',
      form: 'the code form',
      prepare: async () => ({
        fields: { user_code: await userCode() },
        send: sendAs(new UserAgent(t.fetch), 'POST', `${t.issuer}/device`),
      }),
      accepted: async (response) => {
        expect(response.status).toBe(303);
        expect(new URL(response.headers.get('location') as string, t.issuer).pathname).toBe('/oauth/login');
      },
      samples: () => ({ csrf: 'x', decision: 'allow' }),
      blankIsAbsent: false,
      // The confirmation form's fields; a repeated interaction is none.
      pageFields: ['interaction', 'csrf', 'decision'],
    },
    {
      method: 'POST',
      path: '/oauth/device',
      form: 'the confirmation form',
      prepare: async () => {
        const { agent, action, fields } = await deviceConfirmation();
        return { fields, send: sendAs(agent, 'POST', action) };
      },
      accepted: async (response) => {
        expect(response.status).toBe(200);
        expect(await response.text()).toMatch(/Device (connected|denied)/);
      },
      samples: () => ({ decision: 'allow' }),
      blankIsAbsent: false,
      // The code form's field, and the decision: anything but allow denies.
      pageFields: ['user_code', 'decision'],
    },
    ...(['GET', 'POST'] as const).map(
      (method): FormRoute => ({
        method,
        path: '/oauth/logout',
        prepare: async () => ({ fields: {}, send: (fields) => send(method, `${t.issuer}/logout`, fields) }),
        accepted: async (response) => {
          expect([200, 303]).toContain(response.status);
          if (response.status === 303)
            expect(response.headers.get('location')).toMatch(/^https:\/\/rp\.example\.test\/bye/);
        },
        samples: () => ({
          id_token_hint: idToken,
          client_id: web.clientId,
          post_logout_redirect_uri: AFTER,
          state: 's',
          ...(method === 'POST' ? { confirm: 'yes', csrf: 'x' } : {}),
        }),
        blankIsAbsent: true,
        // The confirmation page's answer: a confirm other than yes is no confirmation.
        pageFields: ['confirm', 'csrf'],
      }),
    ),
  ];

  beforeAll(async () => {
    t = await startTestApp(testDatabaseUrls()[0] as TestDatabaseKind);
    web = await t.addClient({
      trusted: false,
      grants: ['authorization_code'],
      scopes: ['openid', 'groups'],
      audiences: [AUDIENCE],
      redirectUris: [REDIRECT],
      postLogoutRedirectUris: [AFTER],
    });
    service = await t.addClient({
      grants: ['client_credentials'],
      scopes: ['api'],
      audiences: [AUDIENCE],
    });
    tv = await t.addClient({
      public: true,
      grants: [DEVICE_CODE_GRANT_TYPE],
      scopes: ['openid'],
      audiences: [AUDIENCE],
    });
    idToken = (await userToken()).id_token;
    document = (await (await t.fetch(`${t.baseUrl}/openapi.json`)).json()) as typeof document;
  });
  afterAll(async () => t?.close());

  /** The documented fields of a route: name → its JSON Schema and whether it is required. */
  function documented(route: FormRoute): Map<string, { schema: Json; required: boolean }> {
    const operation = document.paths[route.path]?.[route.method.toLowerCase()] as Operation;
    expect(operation, `${route.method} ${route.path} is documented`).toBeDefined();
    const fields = new Map<string, { schema: Json; required: boolean }>();
    for (const parameter of operation.parameters ?? [])
      if (parameter.in === 'query')
        fields.set(parameter.name, { schema: parameter.schema, required: parameter.required });
    let body = operation.requestBody?.content['application/x-www-form-urlencoded']?.schema;
    if (body?.oneOf !== undefined) {
      body = (body.oneOf as Json[]).find(
        (option) => ((option.properties as Record<string, Json>).grant_type as Json).const === route.variant,
      );
    }
    const required = new Set((body?.required ?? []) as string[]);
    for (const [name, schema] of Object.entries((body?.properties ?? {}) as Record<string, Json>))
      fields.set(name, { schema, required: required.has(name) });
    return fields;
  }

  /** That `response` is a refusal the route's document lists; about `field`, where it says why. */
  async function expectDocumentedRefusal(route: FormRoute, response: Response, field: string): Promise<void> {
    const operation = document.paths[route.path]?.[route.method.toLowerCase()] as Operation;
    const answer = operation.responses[String(response.status)];
    expect(answer, `${response.status} is documented`).toBeDefined();
    if (response.status === 303) {
      const location = new URL(response.headers.get('location') as string);
      expect(route.redirectsTo, 'a refusal that redirects').toBeDefined();
      expect(`${location.origin}${location.pathname}`).toBe(route.redirectsTo);
      expect(location.searchParams.get('error')).not.toBeNull();
      expect(location.searchParams.get('error_description')).toContain(field);
      return;
    }
    expect(response.status).toBeGreaterThanOrEqual(400);
    if (response.headers.get('content-type')?.startsWith('application/json')) {
      const body = (await response.json()) as { error: string; error_description: string };
      const documentedCodes = JSON.stringify(answer?.content?.['application/json']?.schema);
      expect(documentedCodes).toContain(`"${body.error}"`);
      expect(body.error_description).toContain(field);
    } else {
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(answer?.content).toHaveProperty('text/html');
    }
  }

  /** A value the field's schema refuses, or undefined where the schema refuses nothing a form can send. */
  function refusedValue(schema: Json, blankIsAbsent: boolean): string | undefined {
    if (schema.const !== undefined || schema.enum !== undefined) return 'not-one-of-these';
    if (typeof schema.maxLength === 'number') return 'x'.repeat(schema.maxLength + 1);
    if (typeof schema.pattern === 'string') return '!';
    if (typeof schema.minLength === 'number' && (schema.minLength > 1 || !blankIsAbsent))
      return 'x'.repeat(schema.minLength - 1);
    return undefined;
  }
  const singleValued = (schema: Json) =>
    schema.type !== 'array' && !JSON.stringify(schema.anyOf ?? []).includes('"array"');

  /** The form a route's test is about, where its description covers two. */
  const form = (route: FormRoute) => (route.form === undefined ? '' : `, ${route.form}`);
  describe.each(ROUTES.map((route) => [`${route.method} ${route.path}${form(route)}`, route] as const))(
    '%s',
    (_name, route) => {
      it('carries out a request of documented fields, with or without the optional ones', async () => {
        const fields = documented(route);
        const prepared = await route.prepare();
        const samples = route.samples?.() ?? {};
        for (const name of [...Object.keys(prepared.fields), ...Object.keys(samples)])
          expect(fields.has(name), `${name} is documented`).toBe(true);
        for (const [name, field] of fields)
          if (field.required) expect(prepared.fields, `required ${name}`).toHaveProperty(name);
        await route.accepted(await prepared.send(prepared.fields));
        const full = await route.prepare();
        await route.accepted(await full.send({ ...full.fields, ...samples }));
      });

      it('refuses a request without a field the document marks required', async () => {
        const required = [...documented(route)].filter(([, field]) => field.required).map(([name]) => name);
        for (const name of required) {
          const prepared = await route.prepare();
          const { [name]: _left, ...rest } = prepared.fields;
          await expectDocumentedRefusal(route, await prepared.send(rest), name);
          if (route.blankIsAbsent) {
            const blank = await route.prepare();
            await expectDocumentedRefusal(route, await blank.send({ ...blank.fields, [name]: '' }), name);
          }
        }
      });

      /** Whether a field's trouble refuses the request: OAuth's fields always, a page's when required. */
      const refuses = (name: string, required: boolean) => required || !route.pageFields?.includes(name);

      it('refuses a single-valued field sent twice', async () => {
        for (const [name, field] of documented(route)) {
          if (!singleValued(field.schema) || !refuses(name, field.required)) continue;
          const prepared = await route.prepare();
          const value = prepared.fields[name] ?? route.samples?.()[name] ?? 'x';
          const twice = [value, value].flat() as string[];
          await expectDocumentedRefusal(
            route,
            await prepared.send({ ...prepared.fields, [name]: twice }),
            name,
          );
        }
      });

      it("refuses a value the field's schema refuses", async () => {
        for (const [name, field] of documented(route)) {
          const value = refusedValue(field.schema, route.blankIsAbsent);
          if (value === undefined || !refuses(name, field.required)) continue;
          const prepared = await route.prepare();
          const response = await prepared.send({ ...prepared.fields, ...route.samples?.(), [name]: value });
          await expectDocumentedRefusal(route, response, name);
        }
      });
    },
  );
});
