import { createServer, type Server } from 'node:http';
import {
  IdgateAuthorizationError,
  IdgateDeviceFlowError,
  type NativeClient,
  parseAuthorizationResponse,
  type TokenResponse,
} from '@idgate/sdk';
import { openBrowser } from './browser.js';
import { PluginError } from './errors.js';

/** OpenID scopes, group claims, and a refresh token so that one sign-in lasts and serves every cluster. */
export const SCOPES = 'openid profile email groups offline_access';

/** The issuer refused the sign-in with an OAuth error (`access_denied`, `invalid_target`, …). */
export class SignInRefused extends PluginError {
  constructor(
    readonly error: string,
    readonly errorDescription: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'SignInRefused';
  }
}

export interface BrowserSignInOptions {
  /** The audience of the access token of this sign-in. */
  audience: string;
  /** Every audience the sign-in is to cover (RFC 8707 `resource`), `audience` among them. */
  resources: readonly string[];
  /** `acr_values` to ask for (a second factor: `urn:idgate:acr:mfa`). */
  acrValues?: string | undefined;
  listen: { host: string; port: number };
  /** Open a browser: `BROWSER`'s, else the system's (the URL is printed in any case). */
  open: boolean;
  /** Where `BROWSER` is read. */
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  timeoutMs: number;
  log: (line: string) => void;
}

/**
 * RFC 8252 native-app sign-in for every audience of `resources`, for a token for `audience`: a
 * loopback listener on `listen` (any free port when 0) receives the authorization response at
 * `/callback`; PKCE S256 and `state` bind it to this request.
 */
export async function browserSignIn(
  client: NativeClient,
  options: BrowserSignInOptions,
): Promise<TokenResponse> {
  const server = createServer();
  await listen(server, options.listen);
  try {
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : options.listen.port;
    const redirectUri = `http://${options.listen.host}:${port}/callback`;
    const request = await client.createAuthorizationRequest({
      redirectUri,
      scope: SCOPES,
      resource: options.resources,
      acrValues: options.acrValues,
    });
    const issuer = client.metadata.authorization_response_iss_parameter_supported
      ? client.metadata.issuer
      : undefined;
    const code = new Promise<string>((resolve, reject) => {
      server.on('request', (req, res) => {
        const url = new URL(req.url ?? '/', redirectUri);
        if (req.method !== 'GET' || url.pathname !== '/callback') {
          res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found');
          return;
        }
        try {
          const { code } = parseAuthorizationResponse(url, {
            state: request.state,
            ...(issuer ? { issuer } : {}),
          });
          page(
            res,
            200,
            'Signed in',
            'You are signed in. You can close this window and go back to the terminal.',
          );
          resolve(code);
        } catch (error) {
          if (error instanceof IdgateAuthorizationError) {
            page(
              res,
              400,
              'Sign-in failed',
              `The sign-in failed: ${error.error}. You can close this window.`,
            );
            reject(
              new SignInRefused(
                error.error,
                error.errorDescription,
                error.error === 'access_denied'
                  ? 'the sign-in was denied (access_denied)'
                  : `the sign-in failed: ${error.error}${error.errorDescription ? ` (${error.errorDescription})` : ''}`,
              ),
            );
            return;
          }
          // a response that does not answer our request (wrong state): not ours, keep waiting
          page(res, 400, 'Unexpected response', 'This response does not belong to the sign-in in progress.');
        }
      });
    });
    options.log(`Sign in to ${client.metadata.issuer} in your browser. If it does not open, visit:`);
    options.log(`  ${request.url.href}`);
    if (options.open) openBrowser(request.url.href, options.platform, options.env);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new PluginError(
              `the sign-in was not completed within ${Math.round(options.timeoutMs / 1000)} s (was the browser closed?)`,
            ),
          ),
        options.timeoutMs,
      );
    });
    try {
      const authorizationCode = await Promise.race([code, timeout]);
      return await client.exchangeCode({
        code: authorizationCode,
        redirectUri,
        codeVerifier: request.codeVerifier,
        resource: options.audience,
      });
    } finally {
      clearTimeout(timer);
    }
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

function listen(server: Server, at: { host: string; port: number }): Promise<void> {
  const host = at.host.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new PluginError(
          `cannot listen on ${at.host}:${at.port} for the sign-in: ${error.code ?? error.message}`,
        ),
      ),
    );
    server.listen(at.port, host, () => resolve());
  });
}

function page(res: import('node:http').ServerResponse, status: number, title: string, text: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(
    `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${escapeHtml(text)}</p></body></html>`,
  );
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * RFC 8628 device sign-in for every audience of `resources`: prints where to go and the user code,
 * then polls until approved, for a token for `audience`.
 */
export async function deviceSignIn(
  client: NativeClient,
  options: {
    audience: string;
    resources: readonly string[];
    acrValues?: string | undefined;
    log: (line: string) => void;
  },
): Promise<TokenResponse> {
  const device = await client.requestDeviceAuthorization({
    scope: SCOPES,
    resource: options.resources,
    acrValues: options.acrValues,
  });
  options.log(`To sign in to ${client.metadata.issuer}, open this page on any device:`);
  options.log(`  ${device.verification_uri_complete ?? device.verification_uri}`);
  options.log(`and check that it shows the code ${device.user_code}.`);
  try {
    return await client.pollDeviceAuthorization(device, { resource: options.audience });
  } catch (error) {
    if (error instanceof IdgateDeviceFlowError) {
      throw new PluginError(
        error.error === 'access_denied'
          ? 'the sign-in was denied (access_denied)'
          : 'the code expired before the sign-in was approved (expired_token): run the command again',
      );
    }
    throw error;
  }
}
