import { readFileSync } from 'node:fs';
import {
  AuthorizationError,
  type ClientRecord,
  type AuthorizationRequest as ValidatedRequest,
} from '@idgate/core';
import { AuthorizationRequestForm } from '@idgate/schema';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { extensionOf, LOGO_TYPES } from '../../config.js';
import { type FormBody, isFormRequest } from '../../http/form.js';
import { PASSKEY_SCRIPT } from '../../pages/assets/passkey-script.js';
import { AuthorizationFlow } from '../../pages/flow.js';
import { PAGE_ANSWERS, pageRoute } from '../../pages/form-action.js';
import { BrowserState } from '../../pages/state.js';
import { stylesheet } from '../../pages/views/html.js';

const authorizeDoc = (method: 'GET' | 'POST') =>
  pageRoute({
    operationId: method === 'GET' ? 'authorize' : 'authorizeByPost',
    summary: `Authorization endpoint (OIDC Core §3.1.2, RFC 6749 §4.1)${method === 'POST' ? ', by form POST' : ''}`,
    description:
      'Starts the authorization code flow: the person signs in (unless their browser session is still valid), consents where needed, and goes back to the redirect URI with a code, or with an error (RFC 6749 §4.1.2.1).',
    ...(method === 'GET'
      ? { query: AuthorizationRequestForm }
      : { body: { form: AuthorizationRequestForm } }),
    responses: {
      200: PAGE_ANSWERS.page('the consent page'),
      303: PAGE_ANSWERS.redirect('to the login page, or back to the redirect URI with the code or an error'),
      400: PAGE_ANSWERS.error(
        'the request is not valid and the redirect URI cannot be trusted with the error',
      ),
    },
  });

/** `GET/POST /oauth/authorize` (OIDC Core §3.1.2, RFC 6749 §4.1, RFC 7636) and the pages' stylesheet. */
export async function authorizeRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  const state = new BrowserState(idgate);
  const flow = new AuthorizationFlow(idgate, state);
  const { ui } = idgate.config;
  const css = stylesheet({ primary: ui.primaryColor, background: ui.backgroundColor });
  const logo = readLogo(ui.logoFile);

  const authorize = async (request: FastifyRequest, reply: FastifyReply, params: FormBody) => {
    // The language the application asks the pages to speak (OIDC Core §3.1.2.1), for the whole sign-in.
    state.keepLocale(reply, params.ui_locales);
    let validated: { request: ValidatedRequest; client: ClientRecord };
    try {
      validated = await idgate.core.authorize.validate(params);
    } catch (error) {
      if (error instanceof AuthorizationError) return flow.fail(reply, error);
      throw error;
    }
    const current = await state.currentSession(request);
    const authentication =
      current === undefined ? undefined : state.authentication(current.session, current.user, false);
    return flow.proceed(reply, validated.request, validated.client, authentication);
  };

  app.get<{ Querystring: FormBody }>('/oauth/authorize', authorizeDoc('GET'), (request, reply) =>
    authorize(request, reply, request.query),
  );
  app.post<{ Body: FormBody | undefined }>(
    '/oauth/authorize',
    authorizeDoc('POST'),
    async (request, reply) => {
      if (!isFormRequest(request)) {
        return flow.errorPage(reply, 400, 'The authorization request must be sent as a form.');
      }
      return authorize(request, reply, request.body ?? {});
    },
  );

  app.get(
    `/oauth/assets/idgate.css`,
    {
      config: {
        doc: {
          operationId: 'getStylesheet',
          summary: "The pages' stylesheet",
          tags: ['pages'],
          responses: {
            200: {
              description: 'the stylesheet',
              content: { 'text/css': 'CSS' },
              headers: { 'Cache-Control': 'public, max-age=86400' },
            },
          },
        },
      },
    },
    async (_request, reply) =>
      reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=86400').send(css),
  );

  app.get(
    `/oauth/assets/passkey.js`,
    {
      config: {
        doc: {
          operationId: 'getPasskeyScript',
          summary: "The pages' passkey script",
          description:
            "The only script of the pages (CSP `script-src 'self'`): runs the WebAuthn ceremony of a passkey form and posts its answer.",
          tags: ['pages'],
          responses: {
            200: {
              description: 'the script',
              content: { 'text/javascript': 'JavaScript' },
              headers: { 'Cache-Control': 'public, max-age=86400' },
            },
          },
        },
      },
    },
    async (_request, reply) =>
      reply
        .type('text/javascript; charset=utf-8')
        .header('cache-control', 'public, max-age=86400')
        .header('x-content-type-options', 'nosniff')
        .send(PASSKEY_SCRIPT),
  );

  if (logo !== undefined) {
    app.get(
      '/oauth/assets/logo',
      {
        config: {
          doc: {
            operationId: 'getLogo',
            summary: "The operator's logo on the pages (ui.logoFile)",
            tags: ['pages'],
            responses: {
              200: {
                description: 'the logo',
                content: { [logo.type]: 'the image' },
                headers: { 'Cache-Control': 'public, max-age=3600' },
              },
            },
          },
        },
      },
      async (_request, reply) =>
        reply
          .type(logo.type)
          .header('cache-control', 'public, max-age=3600')
          // An SVG opened on its own runs no script and loads nothing.
          .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox")
          .send(logo.bytes),
    );
  }
}

/** The largest logo the pages carry. */
const MAX_LOGO_BYTES = 256 * 1024;

/** The configured logo, read once at start; a missing, empty or too large file stops the start with its path. */
function readLogo(file: string | undefined): { bytes: Buffer; type: string } | undefined {
  if (file === undefined) return undefined;
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new Error(`ui.logoFile ${file}: ${(error as NodeJS.ErrnoException).code ?? 'cannot be read'}`);
  }
  if (bytes.length === 0 || bytes.length > MAX_LOGO_BYTES)
    throw new Error(`ui.logoFile ${file}: must hold 1 byte to 256 KiB (it holds ${bytes.length})`);
  return { bytes, type: LOGO_TYPES.get(extensionOf(file)) as string };
}
