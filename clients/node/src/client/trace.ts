// W3C trace context across the queue, as the Rust toolkit does
// (crates/onceq/src/trace_context.rs): when @opentelemetry/api can be
// imported (an optional peer dependency), every request carries the active
// context's `traceparent`/`tracestate` headers and a publish also stores them
// in the message's headers (unless the caller set `traceparent` there), all
// written by the global propagator the application installed. Without the
// package, or without a propagator or an active span, nothing is added.

type Api = typeof import("@opentelemetry/api");

let loaded: Promise<Api | null> | undefined;

/** The OpenTelemetry API, or null when it is not installed. Imported once. */
export function otel(): Promise<Api | null> {
  loaded ??= import("@opentelemetry/api").then(
    (api) => api,
    () => null,
  );
  return loaded;
}

/** Adds the active context's trace headers to `carrier` (lower-case names). */
export async function injectTrace(carrier: Record<string, string>): Promise<void> {
  const api = await otel();
  if (!api) return;
  api.propagation.inject(api.context.active(), carrier, {
    set(c, key, value) {
      c[key.toLowerCase()] = value;
    },
  });
}

/** A message's headers with the active trace context added, unless they carry a traceparent already. */
export async function traceMessageHeaders(
  headers: Record<string, string> | undefined,
): Promise<Record<string, string> | undefined> {
  if (headers && Object.keys(headers).some((k) => k.toLowerCase() === "traceparent")) return headers;
  const carrier: Record<string, string> = {};
  await injectTrace(carrier);
  if (Object.keys(carrier).length === 0) return headers;
  return { ...headers, ...carrier };
}

/**
 * Runs `fn` in a `process {queue}` consumer span whose parent is the
 * message's `traceparent` (OpenTelemetry's messaging conventions), so the
 * worker's handler, and the client calls it makes, continue the
 * publisher's trace. Without @opentelemetry/api it just runs `fn`.
 */
export async function inMessageSpan<R>(
  queue: string,
  message: { message_id: string; delivery_count: number; headers?: Record<string, string> | null },
  fn: () => Promise<R>,
): Promise<R> {
  const api = await otel();
  if (!api) return fn();
  const parent = api.propagation.extract(api.context.active(), message.headers ?? {}, {
    get: (c, key) => c[key.toLowerCase()],
    keys: (c) => Object.keys(c),
  });
  const tracer = api.trace.getTracer("onceq");
  return tracer.startActiveSpan(
    `process ${queue}`,
    {
      kind: api.SpanKind.CONSUMER,
      attributes: {
        "messaging.system": "onceq",
        "messaging.operation.type": "process",
        "messaging.destination.name": queue,
        "messaging.message.id": message.message_id,
        "messaging.message.delivery_count": message.delivery_count,
      },
    },
    parent,
    async (span) => {
      try {
        return await fn();
      } finally {
        span.end();
      }
    },
  );
}
