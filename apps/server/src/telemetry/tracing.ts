import { createRequire } from 'node:module';
import {
  context,
  DiagLogLevel,
  diag,
  type Sampler,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import type { IdgateConfig } from '../config.js';

/** OpenTelemetry tracing as the server uses it: present only when an OTLP endpoint is configured. */
export interface Tracing {
  readonly tracer: Tracer;
  /** W3C Trace Context (`traceparent`, `tracestate`): read from requests, written to upstream calls. */
  readonly propagator: TextMapPropagator;
  /** Exports the spans ended so far now, rather than at the next batch; never rejects. */
  flush(): Promise<void>;
  /** Exports the spans still buffered (waiting 5 s at most), then stops exporting; never rejects. */
  shutdown(): Promise<void>;
}

type TelemetryConfig = IdgateConfig['otel'];

/**
 * Where spans are sent: `tracesEndpoint` as given, else `endpoint` with `/v1/traces` appended
 * (the rule of the OTLP exporter specification for `OTEL_EXPORTER_OTLP_ENDPOINT`); undefined when
 * tracing is off.
 */
export function tracesUrl(otel: TelemetryConfig): string | undefined {
  if (otel.tracesEndpoint !== undefined) return otel.tracesEndpoint;
  if (otel.endpoint === undefined) return undefined;
  return `${otel.endpoint.replace(/\/+$/, '')}/v1/traces`;
}

type TraceSdk = typeof import('@opentelemetry/sdk-trace-base');

function samplerOf(otel: TelemetryConfig, sdk: TraceSdk): Sampler {
  const ratio = otel.samplerArg ?? 1;
  const root = (kind: 'always_on' | 'always_off' | 'traceidratio'): Sampler => {
    if (kind === 'always_on') return new sdk.AlwaysOnSampler();
    if (kind === 'always_off') return new sdk.AlwaysOffSampler();
    return new sdk.TraceIdRatioBasedSampler(ratio);
  };
  switch (otel.sampler) {
    case 'always_on':
    case 'always_off':
    case 'traceidratio':
      return root(otel.sampler);
    case 'parentbased_always_on':
      return new sdk.ParentBasedSampler({ root: root('always_on') });
    case 'parentbased_always_off':
      return new sdk.ParentBasedSampler({ root: root('always_off') });
    case 'parentbased_traceidratio':
      return new sdk.ParentBasedSampler({ root: root('traceidratio') });
  }
}

/** Whether this process has registered its (one, global) context manager. */
let contextManagerSet = false;

/** How often, at most, a failing export is reported (it fails every few seconds while the collector is away). */
const REPORT_INTERVAL_MS = 60_000;

/**
 * Where the SDK's own troubles go (an export the collector refused or never answered): `warn`, at
 * most once a minute, rather than nowhere.
 */
function reportSdkTroubles(warn: (message: string) => void): (message: string, ...args: unknown[]) => void {
  let last = Number.NEGATIVE_INFINITY;
  const report = (message: string, ...args: unknown[]) => {
    const now = Date.now();
    if (now - last < REPORT_INTERVAL_MS) return;
    last = now;
    const detail = args.map((arg) => (arg instanceof Error ? arg.message : String(arg))).join(' ');
    warn(`OpenTelemetry: ${message}${detail === '' ? '' : ` ${detail}`}`);
  };
  const quiet = () => {};
  diag.setLogger(
    { error: report, warn: report, info: quiet, debug: quiet, verbose: quiet },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  return report;
}

/** How long a shutdown waits for the last export: a collector that is away must not hold it up. */
const SHUTDOWN_EXPORT_MS = 5_000;

/**
 * Starts exporting spans over OTLP/HTTP when `otel` names an endpoint; otherwise loads nothing and
 * answers undefined, so that a server without tracing creates no span objects at all. The SDK and
 * the exporter are imported here, on demand: they are never loaded when tracing is off.
 */
export async function startTracing(
  otel: TelemetryConfig,
  options: { warn?: (message: string) => void } = {},
): Promise<Tracing | undefined> {
  const url = tracesUrl(otel);
  if (url === undefined) return undefined;
  const report = options.warn === undefined ? () => {} : reportSdkTroubles(options.warn);
  const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };
  const [sdk, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, resources, exporters] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/core'),
      import('@opentelemetry/resources'),
      otel.protocol === 'http/json'
        ? import('@opentelemetry/exporter-trace-otlp-http')
        : import('@opentelemetry/exporter-trace-otlp-proto'),
    ]);
  // The exporter still reads OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT and _COMPRESSION itself.
  const exporter = new exporters.OTLPTraceExporter({ url });
  const provider = new sdk.BasicTracerProvider({
    resource: resources
      .defaultResource()
      .merge(
        resources.resourceFromAttributes({ 'service.name': otel.serviceName, 'service.version': version }),
      ),
    sampler: samplerOf(otel, sdk),
    spanProcessors: [new sdk.BatchSpanProcessor(exporter)],
  });
  // Parent and child spans find each other through the active context, which needs a context
  // manager; a second server in the same process (tests) keeps the first one's, which is alike.
  if (!contextManagerSet) {
    contextManagerSet = context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  }
  return {
    tracer: provider.getTracer('idgate', version),
    propagator: new W3CTraceContextPropagator(),
    // Exporting is best effort: a failed export is reported, never thrown at the server.
    flush: () => provider.forceFlush().catch((error: unknown) => report('export failed', error)),
    shutdown: async () => {
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          report(`the last spans were not exported within ${SHUTDOWN_EXPORT_MS} ms`);
          resolve();
        }, SHUTDOWN_EXPORT_MS);
        timer.unref();
      });
      const done = provider.shutdown().catch((error: unknown) => report('export failed', error));
      await Promise.race([done, waited]);
      clearTimeout(timer);
    },
  };
}
