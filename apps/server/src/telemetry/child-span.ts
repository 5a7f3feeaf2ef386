import {
  type Attributes,
  context,
  type Span,
  type SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';

/**
 * A span under the active one, or undefined when no span is active: work outside a request (the
 * change feed's polling, purges) makes no traces of its own.
 */
export function childSpan(
  tracer: Tracer,
  name: string,
  kind: SpanKind,
  attributes: Attributes,
): { span: Span; context: ReturnType<typeof context.active> } | undefined {
  const parent = context.active();
  if (trace.getSpan(parent) === undefined) return undefined;
  const span = tracer.startSpan(name, { kind, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/**
 * Marks `span` failed with `error.type` (a code or class name, never a message: driver and library
 * messages can quote values, bodies or credentials) and ends it.
 */
export function endFailed(span: Span, error: unknown): void {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  const type =
    typeof code === 'string' && code !== '' ? code : error instanceof Error ? error.name : '_OTHER';
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** Runs `work` in a child span (see {@link childSpan}); `work` alone when there is no parent. */
export async function inChildSpan<T>(
  tracer: Tracer,
  name: string,
  kind: SpanKind,
  attributes: Attributes,
  work: () => Promise<T>,
): Promise<T> {
  const child = childSpan(tracer, name, kind, attributes);
  if (child === undefined) return work();
  let result: T;
  try {
    result = await context.with(child.context, work);
  } catch (error) {
    endFailed(child.span, error);
    throw error;
  }
  child.span.end();
  return result;
}
