import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { endsWithTest, stopWhenTestEnds } from '../../../server/test/helpers/child-processes.js';
import { selfSignedCertificate } from './kube-apiserver.js';

/**
 * idgate's CLI and server (`@idgate/server`, a devDependency so that turbo builds it before these
 * tests; by hand: `pnpm --filter @idgate/server build`).
 */
export const IDGATE_BIN = fileURLToPath(
  new URL('../../node_modules/@idgate/server/dist/bin.js', import.meta.url),
);

const SECRET = 'kubectl-e2e-secret-0123456789-abcdefghijklmnop';

export interface IdgateRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A request that reached idgate through its https front: `METHOD /path`, and the grant type and resources (comma-separated) of a token or device authorization request. */
export interface SeenRequest {
  line: string;
  grantType?: string | undefined;
  resource?: string | undefined;
  /** The `acr_values` of a device authorization request. */
  acrValues?: string | undefined;
}

/**
 * A real idgate: `apps/server/dist/bin.js serve` on 127.0.0.1 (SQLite in `dir`), seeded through its
 * own CLI, behind an https front on 127.0.0.1 (a throwaway openssl certificate: Kubernetes'
 * structured authentication wants an https issuer) that records every request it forwards.
 * Started in a test, it is stopped when the test ends; started in a `beforeAll`, by `stop()` in
 * the file's `afterAll`. A CLI command still running when its test ends is killed.
 */
export interface IdgateIssuer {
  /** `https://127.0.0.1:PORT/oauth`. */
  issuer: string;
  /** The PEM of the front's certificate (trust it with NODE_EXTRA_CA_CERTS). */
  caFile: string;
  ca: string;
  /** The requests idgate received, in order. */
  requests: SeenRequest[];
  /** Lifetime of idgate's access tokens, in seconds. */
  accessTokenTtl: number;
  /** Runs `idgate ...args` on the same database and configuration. */
  cli(args: string[], input?: string): Promise<IdgateRun>;
  /** Signs in as `username` on idgate's device page (verification_uri_complete) and allows or denies. */
  /** The device confirmation pages `approveDevice` saw (what the person was asked to allow), in order. */
  confirmations: string[];
  approveDevice(
    verificationUriComplete: string,
    person: Person,
    decision?: 'allow' | 'deny',
  ): Promise<string>;
  /** GET or POST through the https front with its CA. */
  request(
    url: string,
    init?: { method?: string; headers?: Record<string, string>; body?: string | undefined },
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const probe = createHttpServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * Who signs in on idgate's pages. `secondFactor`, when idgate asks for a code (an authenticator
 * app to enrol, or one enrolled), answers the page with one; without it such a page is an error.
 */
export interface Person {
  username: string;
  password: string;
  secondFactor?: (page: string) => string;
}

export async function startIdgate(options: { dir: string; accessTokenTtl?: number }): Promise<IdgateIssuer> {
  const accessTokenTtl = options.accessTokenTtl ?? 600;
  const { keyFile, caFile } = selfSignedCertificate(options.dir, 'idgate');
  const ca = await readFile(caFile, 'utf8');
  const front = createHttpsServer({ key: await readFile(keyFile), cert: ca });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const issuer = `https://127.0.0.1:${(front.address() as AddressInfo).port}/oauth`;
  const port = await freePort();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: options.dir,
    IDGATE_DATABASE_URL: `sqlite:${join(options.dir, 'idgate.db')}`,
    IDGATE_SECRET: SECRET,
    IDGATE_ISSUER: issuer,
    IDGATE_HOST: '127.0.0.1',
    IDGATE_PORT: String(port),
    IDGATE_ACCESS_TOKEN_TTL: String(accessTokenTtl),
    IDGATE_DEVICE_POLL_INTERVAL: '1',
    IDGATE_LOG_LEVEL: 'warn',
  };

  const requests: SeenRequest[] = [];
  const confirmations: string[] = [];
  front.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = new URL(req.url ?? '/', issuer).pathname;
      const seen: SeenRequest = { line: `${req.method} ${path}` };
      if (path === '/oauth/token' || path === '/oauth/device_authorization') {
        const form = new URLSearchParams(body.toString('utf8'));
        seen.grantType = form.get('grant_type') ?? undefined;
        // every resource of the request, in order
        seen.resource = form.getAll('resource').join(',') || undefined;
        if (form.has('acr_values')) seen.acrValues = form.get('acr_values') ?? undefined;
      }
      requests.push(seen);
      const upstream = httpRequest(
        { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => {
        res.statusCode = 502;
        res.end();
      });
      upstream.end(body);
    });
  });

  const cli = (args: string[], input?: string) =>
    new Promise<IdgateRun>((resolve, reject) => {
      const child = endsWithTest(
        spawn(process.execPath, [IDGATE_BIN, ...args], {
          env,
          cwd: options.dir,
          stdio: ['pipe', 'pipe', 'pipe'],
        }),
      );
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(input ?? '');
    });

  const migrated = await cli(['migrate']);
  if (migrated.code !== 0) {
    await new Promise<void>((resolve) => front.close(() => resolve()));
    throw new Error(`idgate migrate failed: ${migrated.stderr}`);
  }
  const server: ChildProcess = spawn(process.execPath, [IDGATE_BIN, 'serve'], {
    env,
    cwd: options.dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let serverLog = '';
  server.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    serverLog += chunk;
  });
  const exited = new Promise<void>((resolve) => {
    if (server.exitCode !== null || server.signalCode !== null) resolve();
    else server.once('exit', () => resolve());
  });
  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGTERM');
    await exited;
    front.closeAllConnections();
    await new Promise<void>((resolve) => front.close(() => resolve()));
  };
  stopWhenTestEnds(stop);
  // A guard against a hang, not a measure: a loaded machine starts a server slowly.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ready = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (server.exitCode !== null || Date.now() > deadline) {
      // Nothing of a failed start may outlive the test: the caller never gets a stop() to call.
      await stop();
      throw new Error(`idgate did not start: ${serverLog}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  const request: IdgateIssuer['request'] = (url, init = {}) =>
    new Promise((resolve, reject) => {
      const req = httpsRequest(url, { method: init.method ?? 'GET', headers: init.headers, ca }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      });
      req.on('error', reject);
      req.end(init.body);
    });

  /** A person's browser reduced to a cookie jar and HTML forms, through the https front. */
  async function approveDevice(
    uri: string,
    person: Person,
    decision: 'allow' | 'deny' = 'allow',
  ): Promise<string> {
    const jar = new Map<string, string>();
    const send = async (url: string, form?: Record<string, string>) => {
      const headers: Record<string, string> = {};
      if (jar.size > 0) headers.cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
      let body: string | undefined;
      if (form !== undefined) {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        body = new URLSearchParams(form).toString();
      }
      const answer = await request(url, { method: form === undefined ? 'GET' : 'POST', headers, body });
      for (const cookie of [answer.headers['set-cookie'] ?? []].flat()) {
        const [pair = ''] = cookie.split(';');
        const eq = pair.indexOf('=');
        const value = pair.slice(eq + 1);
        if (value === '' || /max-age=0/i.test(cookie)) jar.delete(pair.slice(0, eq));
        else jar.set(pair.slice(0, eq), value);
      }
      return answer;
    };
    /** Sends a form, then follows 303s to the page they lead to. */
    const submit = async (url: string, form?: Record<string, string>) => {
      let current = url;
      let answer = await send(current, form);
      while (answer.status === 303 || answer.status === 302) {
        current = new URL(String(answer.headers.location), current).href;
        answer = await send(current);
      }
      if (answer.status !== 200) throw new Error(`${current} answered ${answer.status}: ${answer.text}`);
      return { url: current, html: answer.text };
    };
    // verification_uri_complete: the code form, prefilled
    const entry = await submit(uri);
    const codeForm = readForm(entry.html, entry.url);
    const login = await submit(codeForm.action, codeForm.fields);
    const loginForm = readForm(login.html, login.url);
    let confirm = await submit(loginForm.action, {
      ...loginForm.fields,
      username: person.username,
      password: person.password,
    });
    // a second factor asked for: enrol an authenticator app (then go on past the recovery codes),
    // or enter a code of the enrolled one
    for (let step = 0; step < 4 && !/name="decision"/.test(confirm.html); step++) {
      const next = readForm(confirm.html, confirm.url);
      if (!/name="code"/.test(confirm.html)) {
        confirm = await submit(next.action, next.fields);
        continue;
      }
      if (person.secondFactor === undefined)
        throw new Error(`idgate asked ${person.username} for a second factor: ${confirm.url}`);
      confirm = await submit(next.action, { ...next.fields, code: person.secondFactor(confirm.html) });
    }
    confirmations.push(confirm.html);
    const confirmForm = readForm(confirm.html, confirm.url);
    const done = await submit(confirmForm.action, { ...confirmForm.fields, decision });
    return done.html;
  }

  return {
    issuer,
    caFile,
    ca,
    requests,
    confirmations,
    accessTokenTtl,
    cli,
    approveDevice,
    request,
    stop,
  };
}

/** The first form of a page: its action (absolute) and every input with a value (submit buttons aside). */
function readForm(html: string, base: string): { action: string; fields: Record<string, string> } {
  const form = /<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (form === null) throw new Error(`no form on the page:\n${html.slice(0, 500)}`);
  const fields: Record<string, string> = {};
  for (const input of (form[2] ?? '').matchAll(/<input[^>]*>/gi)) {
    const name = /name="([^"]*)"/.exec(input[0])?.[1];
    const value = /value="([^"]*)"/.exec(input[0])?.[1];
    if (name !== undefined && value !== undefined && !/type="submit"/i.test(input[0]))
      fields[name] = unescapeHtml(value);
  }
  return { action: new URL(unescapeHtml(form[1] ?? ''), base).href, fields };
}

function unescapeHtml(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
