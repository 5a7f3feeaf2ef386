import { createServer } from 'node:http';

/** One span as an OTLP/HTTP JSON export carries it, its attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** The `service.name` of the resource it came with. */
  service: string;
}

/**
 * A local OTLP/HTTP receiver on 127.0.0.1, a plain node:http server that accepts JSON exports
 * (`POST /v1/traces`, `http/json`) as a collector would, and keeps every body and span; a
 * protobuf export (`http/protobuf`) is accepted and kept as its body.
 */
export interface OtlpReceiver {
  /** The base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it (`/v1/traces` is appended). */
  endpoint: string;
  /** Every export request, method, path and content type, with its raw body. */
  requests: Array<{ method: string; path: string; contentType: string; body: Buffer }>;
  /** The spans of the JSON exports (protobuf ones are kept as bodies only). */
  spans: ReceivedSpan[];
  stop(): Promise<void>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
};
type KeyValue = { key: string; value: AnyValue };
type ExportRequest = {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: KeyValue[];
      }>;
    }>;
  }>;
};

function plain(value: AnyValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return JSON.stringify(value);
}

const flatten = (attributes: KeyValue[] = []) =>
  Object.fromEntries(attributes.map(({ key, value }) => [key, plain(value)]));

/** OTLP/JSON writes ids as hex (the JSON encoding's rule); base64, protobuf JSON's default, is read too. */
function hexId(id: string | undefined): string {
  if (id === undefined || id === '') return '';
  return /^[0-9a-f]+$/.test(id) ? id : Buffer.from(id, 'base64').toString('hex');
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: OtlpReceiver['requests'] = [];
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = new URL(req.url ?? '/', 'http://receiver').pathname;
      const contentType = req.headers['content-type'] ?? '';
      requests.push({ method: req.method ?? '', path, contentType, body });
      if (req.method !== 'POST' || path !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      if (contentType !== 'application/json') {
        res.writeHead(200, { 'content-type': contentType }).end();
        return;
      }
      const parsed = JSON.parse(body.toString('utf8')) as ExportRequest;
      for (const resourceSpans of parsed.resourceSpans ?? []) {
        const service = String(flatten(resourceSpans.resource?.attributes)['service.name']);
        for (const scope of resourceSpans.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            spans.push({
              traceId: hexId(span.traceId),
              spanId: hexId(span.spanId),
              parentSpanId: hexId(span.parentSpanId),
              name: span.name,
              kind: span.kind,
              attributes: flatten(span.attributes),
              service,
            });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    spans,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
