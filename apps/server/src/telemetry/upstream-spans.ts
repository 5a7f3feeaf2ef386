import { SpanKind, SpanStatusCode, type TextMapSetter } from '@opentelemetry/api';
import type { ClientOptions } from 'ldapts';
import { type LdapClient, type LdapConnectorOptions, loadLdapts } from '../connectors/ldap.js';
import { childSpan, endFailed, inChildSpan } from './child-span.js';
import type { Tracing } from './tracing.js';

const setHeader: TextMapSetter<Headers> = { set: (headers, key, value) => headers.set(key, value) };

function defaultPort(protocol: string): number | undefined {
  return { 'http:': 80, 'https:': 443, 'ldap:': 389, 'ldaps:': 636 }[protocol];
}

/**
 * `fetch` with a client span per upstream request (HTTP semantic conventions) and the span's
 * W3C trace context sent upstream in `traceparent`. `url.full` leaves out the query and any user
 * information: neither is recorded.
 * @example createOidcConnector(config, { fetch: tracedFetch(tracing) })
 */
export function tracedFetch(tracing: Tracing, base: typeof fetch = globalThis.fetch): typeof fetch {
  return async (input, init) => {
    const request = input instanceof Request ? input : undefined;
    const url = new URL(request?.url ?? String(input));
    const method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
    const child = childSpan(tracing.tracer, method, SpanKind.CLIENT, {
      'http.request.method': method,
      'server.address': url.hostname.replace(/^\[(.*)\]$/, '$1'),
      'server.port': url.port === '' ? (defaultPort(url.protocol) ?? 0) : Number(url.port),
      'url.full': `${url.origin}${url.pathname}`,
    });
    if (child === undefined) return base(input, init);
    const headers = new Headers(init?.headers ?? request?.headers);
    tracing.propagator.inject(child.context, headers, setHeader);
    let answer: Response;
    try {
      answer = await base(input, { ...init, headers });
    } catch (error) {
      endFailed(child.span, error);
      throw error;
    }
    child.span.setAttribute('http.response.status_code', answer.status);
    if (answer.status >= 400) {
      child.span.setAttribute('error.type', String(answer.status));
      child.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    child.span.end();
    return answer;
  };
}

const LDAP_OPERATIONS = ['bind', 'search', 'startTLS', 'unbind'] as const;

/**
 * Makes ldapts clients whose operations each run in a client span (`LDAP bind`, `LDAP search`).
 * Only the operation and the server are recorded: never a DN, a filter or a password.
 * @example createLdapConnector(config, { clientFactory: tracedLdapClients(tracing) })
 */
export function tracedLdapClients(
  tracing: Tracing,
  factory: NonNullable<LdapConnectorOptions['clientFactory']> = async (options) =>
    new (await loadLdapts()).Client(options),
): (options: ClientOptions) => Promise<LdapClient> {
  return async (options) => {
    const client = await factory(options);
    const url = new URL(options.url);
    const server = {
      'network.protocol.name': 'ldap',
      'server.address': url.hostname.replace(/^\[(.*)\]$/, '$1'),
      'server.port': url.port === '' ? (defaultPort(url.protocol) ?? 0) : Number(url.port),
    };
    const traced = {} as Record<(typeof LDAP_OPERATIONS)[number], unknown>;
    for (const operation of LDAP_OPERATIONS) {
      const original = client[operation] as (...args: unknown[]) => Promise<unknown>;
      traced[operation] = (...args: unknown[]) =>
        inChildSpan(
          tracing.tracer,
          `LDAP ${operation}`,
          SpanKind.CLIENT,
          { ...server, 'idgate.ldap.operation': operation },
          () => original.apply(client, args),
        );
    }
    return traced as unknown as LdapClient;
  };
}
