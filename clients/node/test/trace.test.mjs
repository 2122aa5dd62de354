// The active OpenTelemetry context goes out as `traceparent` on requests
// and into published messages' headers, and the worker's handler runs in
// the message's trace; without @opentelemetry/api nothing is added and
// nothing breaks.
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "node:test";
import { fileURLToPath } from "node:url";

import { context, propagation, ROOT_CONTEXT, trace, TraceFlags } from "@opentelemetry/api";

import { Worker } from "../dist/index.js";
import { client, ONCEQ_API_KEY, ONCEQ_URL, pool, proxy, queueName, quiet } from "../test-support/env.mjs";

// What an application's OpenTelemetry SDK installs: a context manager that
// follows async calls, and the W3C propagator (both written out here, the
// SDK packages not being dependencies of this package).
class AlsContextManager {
  #als = new AsyncLocalStorage();
  active() {
    return this.#als.getStore() ?? ROOT_CONTEXT;
  }
  with(ctx, fn, thisArg, ...args) {
    return this.#als.run(ctx, () => fn.apply(thisArg, args));
  }
  bind(_ctx, target) {
    return target;
  }
  enable() {
    return this;
  }
  disable() {
    return this;
  }
}
const w3c = {
  inject(ctx, carrier, setter) {
    const sc = trace.getSpanContext(ctx);
    if (sc) setter.set(carrier, "traceparent", `00-${sc.traceId}-${sc.spanId}-0${sc.traceFlags.toString(16)}`);
  },
  extract(ctx, carrier, getter) {
    const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(getter.get(carrier, "traceparent") ?? "");
    if (!m) return ctx;
    return trace.setSpanContext(ctx, { traceId: m[1], spanId: m[2], traceFlags: parseInt(m[3], 16), isRemote: true });
  },
  fields: () => ["traceparent"],
};
context.setGlobalContextManager(new AlsContextManager());
propagation.setGlobalPropagator(w3c);

const span = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: TraceFlags.SAMPLED };
const traceparent = `00-${span.traceId}-${span.spanId}-01`;
const inSpan = (fn) => context.with(trace.setSpanContext(ROOT_CONTEXT, span), fn);

test("requests and published messages carry the active traceparent; a caller's own wins", async () => {
  const p = await proxy(ONCEQ_URL);
  try {
    const c = client({ baseUrl: p.url });
    const q = queueName("trace");
    await inSpan(() => c.publish(q, { t: 1 }));
    await inSpan(() => c.publish(q, { t: 2 }, { headers: { traceparent: "00-11111111111111111111111111111111-2222222222222222-01" } }));
    await c.publish(q, { t: 3 });
    assert.equal(p.seen[0].headers.traceparent, traceparent, "the request's header");
    assert.equal(p.seen[2].headers.traceparent, undefined, "outside a span, nothing");
    const got = await c.consume(q, { maxMessages: 3 });
    const byT = Object.fromEntries(got.map((m) => [m.payload.t, m.headers]));
    assert.equal(byT[1].traceparent, traceparent);
    assert.equal(byT[2].traceparent, "00-11111111111111111111111111111111-2222222222222222-01");
    assert.equal(byT[3].traceparent, undefined);
  } finally {
    await p.close();
  }
});

test("the worker's handler runs in the publisher's trace", async () => {
  const db = pool();
  try {
    const c = client();
    const q = queueName("trace-w");
    await inSpan(() => c.publish(q, { t: 1 }));
    let seen;
    const w = new Worker({
      client: c,
      pool: db,
      queue: q,
      logger: quiet,
      signals: [],
      handler: () => {
        seen = trace.getSpanContext(context.active());
      },
    });
    assert.equal((await w.runOnce()).done, 1);
    assert.equal(seen?.traceId, span.traceId);
  } finally {
    await db.end();
  }
});

test("without @opentelemetry/api installed the client works and adds no trace headers", async () => {
  const dir = mkdtempSync(join(tmpdir(), "onceq-no-otel-"));
  try {
    cpSync(fileURLToPath(new URL("../dist", import.meta.url)), join(dir, "dist"), { recursive: true });
    const q = queueName("no-otel");
    const script = `
      let present = true;
      try { await import("@opentelemetry/api"); } catch { present = false; }
      const { Client } = await import(${JSON.stringify(join(dir, "dist/client/index.js"))});
      const c = new Client({ baseUrl: process.env.ONCEQ_URL, apiKey: process.env.ONCEQ_API_KEY });
      await c.publish(${JSON.stringify(q)}, { t: 1 });
      const [m] = await c.consume(${JSON.stringify(q)});
      console.log(JSON.stringify({ present, headers: m.headers }));`;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: dir,
      env: { ...process.env, ONCEQ_URL, ONCEQ_API_KEY },
    });
    const { present, headers } = JSON.parse(out.toString());
    assert.equal(present, false, "the scratch directory cannot see the package's node_modules");
    assert.deepEqual(headers, {});
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
