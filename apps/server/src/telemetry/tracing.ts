import { createRequire } from 'node:module';
import { context, type Sampler, type TextMapPropagator, type Tracer } from '@opentelemetry/api';
import type { IdgateConfig } from '../config.js';

/** OpenTelemetry tracing as the server uses it: present only when an OTLP endpoint is configured. */
export interface Tracing {
  readonly tracer: Tracer;
  /** W3C Trace Context (`traceparent`, `tracestate`): read from requests, written to upstream calls. */
  readonly propagator: TextMapPropagator;
  /** Exports the spans ended so far now, rather than at the next batch. */
  flush(): Promise<void>;
  /** Exports the spans still buffered, then stops exporting. */
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

/**
 * Starts exporting spans over OTLP/HTTP when `otel` names an endpoint; otherwise loads nothing and
 * answers undefined, so that a server without tracing creates no span objects at all. The SDK and
 * the exporter are imported here, on demand: they are never loaded when tracing is off.
 */
export async function startTracing(otel: TelemetryConfig): Promise<Tracing | undefined> {
  const url = tracesUrl(otel);
  if (url === undefined) return undefined;
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
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  return {
    tracer: provider.getTracer('idgate', version),
    propagator: new W3CTraceContextPropagator(),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
