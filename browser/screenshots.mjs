// Seeds realistic traffic into a running `onceq serve` and saves
// screenshots of the dashboard's main pages (run by scripts/screenshots,
// which starts the server and passes ONCEQ_BASE, ONCEQ_API_KEY, OUT_DIR).
//
// The throughput charts show what this server process saw, so the seeding
// runs in real time for SEED_SECONDS (default 120): bursts of publishes,
// workers that ack most messages, retry some (nacks: the failures chart),
// fail some (to the DLQ) and hold a few.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { client, launch, waitFor } from "./lib.mjs";

const base = process.env.ONCEQ_BASE;
const key = process.env.ONCEQ_API_KEY;
const out = process.env.OUT_DIR;
const seconds = Number(process.env.SEED_SECONDS || 120);
const api = client(base, key);
mkdirSync(out, { recursive: true });

const pick = (xs, i) => xs[i % xs.length];
const lifeShot = {}; // ids for the message-life shots below
const tenants = ["acme", "globex", "initech", "umbrella", "hooli", "stark"];
const templates = ["welcome", "password-reset", "receipt", "weekly-digest"];

await api("POST", "/v1/queue/create", { name: "emails", max_retries: 3 });
await api("POST", "/v1/queue/create", { name: "exports", max_retries: 2, visibility_timeout_default: 120 });
await api("POST", "/v1/queue/create", { name: "webhooks", max_retries: 0 });
await api("POST", "/v1/queue/create", { name: "invoices", type: "fifo" });
// Settings beyond the defaults, shown on the queue page and its form.
await api("POST", "/v1/queue/update", {
  name: "exports", retry_backoff: { initial_seconds: 10, max_seconds: 600, multiplier: 3 }, max_in_flight: 4,
});

let n = 0;
async function publish(queue, payload, extra = {}) {
  n += 1;
  return api("POST", "/v1/queue/publish", { queue, payload, ...extra });
}

async function work(queue, max, fate) {
  const { items } = await api("POST", "/v1/queue/consume", { queue, max_messages: max });
  for (const m of items) {
    const f = fate(m);
    if (f === "ack") await api("POST", "/v1/queue/ack", { queue, message_id: m.message_id, receipt: m.receipt });
    if (f === "fail") await api("POST", "/v1/queue/nack", { queue, message_id: m.message_id, receipt: m.receipt, requeue: false });
    if (f === "retry") await api("POST", "/v1/queue/nack", { queue, message_id: m.message_id, receipt: m.receipt, requeue: true });
    // "hold": left in flight under its lease.
  }
}

const started = Date.now();
let tick = 0;
console.log(`screenshots: seeding for ${seconds} s`);
while (Date.now() - started < seconds * 1000) {
  tick += 1;
  const wave = 1 + Math.round(2 * (1 + Math.sin(tick / 9)));
  for (let i = 0; i < wave; i++) {
    await publish("emails", { to: `user${n}@${pick(tenants, n)}.example`, template: pick(templates, n), locale: pick(["en", "fr", "de"], n) },
      { idempotency_key: `signup-${n}` });
  }
  if (tick % 2 === 0) {
    await publish("exports", { job: "export", tenant: pick(tenants, tick), format: pick(["csv", "xlsx", "parquet"], tick), rows: 1000 * (tick % 37) },
      { idempotency_key: `req_export_${tick}` });
  }
  await publish("webhooks", { event: pick(["invoice.paid", "customer.created", "subscription.renewed"], tick), endpoint: `https://hooks.${pick(tenants, tick)}.example/onceq`, attempt: 1 });
  if (tick % 3 === 0) {
    await publish("invoices", { invoice: `INV-2026-${1000 + tick}`, amount_cents: 1250 * (tick % 17 + 1), currency: "EUR" },
      { message_group_id: pick(tenants, tick) });
  }
  await work("emails", Math.max(1, wave - (tick % 4 === 0 ? 1 : 0)), () => (tick % 5 === 0 ? "retry" : "ack"));
  if (tick % 3 === 0) await work("exports", 1, () => "ack");
  await work("webhooks", 1, () => (tick % 13 === 0 ? "fail" : "ack"));
  if (tick % 4 === 0) await work("invoices", 2, () => "ack");
  await new Promise((r) => setTimeout(r, 350));
}
// A little of every state: delayed, in flight, dead letters.
for (let i = 0; i < 4; i++) {
  await publish("emails", { to: `later${i}@acme.example`, template: "weekly-digest", locale: "en" }, { delay_seconds: 3600 });
}
await work("exports", 2, () => "hold");
// Invoices waiting in their groups, one group's head in flight.
for (let i = 0; i < 9; i++) {
  await publish("invoices", { invoice: `INV-2026-${5000 + i}`, amount_cents: 990 * (i + 1), currency: "EUR" },
    { message_group_id: pick(tenants.slice(0, 3), i) });
}
await work("invoices", 1, () => "hold");
await publish("webhooks", { event: "invoice.paid", endpoint: "https://hooks.initech.example/onceq", attempt: 1, note: "<b>escaped</b>" },
  { idempotency_key: "evt_7Hq2" });
await work("webhooks", 10, (m) => (m.idempotency_key === "evt_7Hq2" ? "fail" : "ack"));

const shots = [];
async function shoot(scheme, name, path, { full = false, prepare } = {}) {
  const { page, close } = await launch({ colorScheme: scheme, width: 1280, height: 800 });
  try {
    await page.goto(base + "/dashboard/signin");
    if (name !== "signin") {
      await page.getByLabel("API key").fill(key);
      await page.keyboard.press("Enter");
      await page.waitForURL(base + "/dashboard");
      await page.goto(base + path);
    }
    if (prepare) await prepare(page);
    const file = join(out, `${name}.png`);
    await page.screenshot({ path: file, fullPage: full });
    shots.push(file);
  } finally {
    await close();
  }
}

const dlq = await api("GET", "/v1/queue/stats/webhooks");
console.log(`screenshots: webhooks holds ${dlq.dead_lettered} dead letters`);
await shoot("light", "overview", "/dashboard");
await shoot("dark", "overview-dark", "/dashboard");
await shoot("light", "queue", "/dashboard/queues/exports");
await shoot("light", "dlq", "/dashboard/queues/webhooks/dlq");
await shoot("dark", "message", "/dashboard/queues/webhooks/dlq", {
  prepare: async (page) => {
    await page.locator("table.messages tbody tr:last-child th a").click();
    await waitFor("the message page", () => page.locator("pre.payload").isVisible());
  },
});
await shoot("light", "purge", "/dashboard/queues/exports/purge");
await shoot("light", "fifo", "/dashboard/queues/invoices");
await shoot("light", "search", "/dashboard/queues/emails?q=acme&in=payload");
await shoot("light", "confirm", "/dashboard/queues/emails?state=delayed", {
  prepare: async (page) => {
    const boxes = page.locator("input.select");
    await boxes.nth(0).check();
    await boxes.nth(1).check();
    await page.locator("#bulk-action").selectOption("delete");
    await page.locator("#bulk-apply").click();
    await page.locator("#confirm-what").waitFor();
  },
});
await shoot("light", "signin", "/dashboard/signin");
// The settings form answering a refused value with the API's error.
await shoot("light", "settings", "/dashboard/queues/exports/settings", {
  full: true,
  prepare: async (page) => {
    await page.getByLabel("Hand-outs per second").fill("0");
    await page.locator("#save-settings").click();
    await page.locator("#settings-error").waitFor();
  },
});
// Cron schedules, one of them paused, the other with runs of its own.
const digest = await api("POST", "/v1/cron/create", {
  name: "weekly-digest", cron_expr: "0 8 * * MON", timezone: "Europe/Paris", queue: "emails",
  payload: { template: "weekly-digest" },
});
await api("POST", "/v1/cron/create", {
  name: "nightly-export", cron_expr: "30 2 * * *", queue: "exports", payload: { job: "export", tenant: "all" },
});
await api("POST", "/v1/cron/create", {
  name: "heartbeat", cron_expr: "*/10 * * * * *", queue: "webhooks", payload: { event: "heartbeat" }, max_runs: 1000,
});
await api("POST", `/v1/cron/pause/${digest.job_id}`);
await waitFor("a heartbeat run", async () => (await api("GET", "/v1/cron/list")).items.some((j) => j.run_count > 0), 30000);
await shoot("light", "cron", "/dashboard/cron");
// A message's whole life (message page with its error and
// attempts, the DLQ's errors, completed jobs with results). Seeded here,
// after the traffic above, in a queue of its own that keeps finished
// messages.
await api("POST", "/v1/queue/create", { name: "imports", completed_retention_seconds: 86400, max_retries: 1 });
for (let i = 0; i < 6; i += 1) {
  const { message_id } = await publish("imports", { file: `batch-${i}.csv`, tenant: pick(tenants, i) });
  const { items } = await api("POST", "/v1/queue/consume", { queue: "imports", max_messages: 1 });
  const m = items[0];
  if (i % 3 === 2) {
    await api("POST", "/v1/queue/nack", {
      queue: "imports", message_id: m.message_id, receipt: m.receipt, requeue: false,
      error: `ValueError: row ${i * 7} of batch-${i}.csv has no date\n  at parse (import.py:42)\n  at run (worker.py:17)`,
    });
  } else {
    await api("POST", "/v1/queue/ack", {
      queue: "imports", message_id: m.message_id, receipt: m.receipt, result: { rows: 100 + i, skipped: i },
    });
  }
  if (i === 0) lifeShot.completed = message_id;
}
{
  const { message_id } = await publish("imports", { file: "late.csv" });
  const { items } = await api("POST", "/v1/queue/consume", { queue: "imports", max_messages: 1 });
  await api("POST", "/v1/queue/nack", {
    queue: "imports", message_id, receipt: items[0].receipt, delay_seconds: 600,
    error: "TimeoutError: upstream took longer than 30 s",
  });
  lifeShot.failing = message_id;
}
await shoot("light", "message-life", `/dashboard/queues/imports/messages/${lifeShot.failing}`);
await shoot("light", "dlq-errors", "/dashboard/queues/imports/dlq");
await shoot("light", "completed", "/dashboard/queues/imports/completed");
await shoot("dark", "message-completed", `/dashboard/queues/imports/messages/${lifeShot.completed}`);
// A selection cancelled from the queue page: the report, id by id (one
// of them finished meanwhile, so it is "gone").
{
  const picked = [];
  for (const file of ["retry-1.csv", "retry-2.csv", "retry-3.csv", "retry-4.csv"]) {
    picked.push((await publish("imports", { file, tenant: "acme" })).message_id);
  }
  await shoot("light", "cancelled", "/dashboard/queues/imports", {
    prepare: async (page) => {
      for (const id of picked) await page.locator(`#sel-${id}`).check();
      const { items } = await api("POST", "/v1/queue/consume", { queue: "imports", max_messages: 1 });
      await api("POST", "/v1/queue/ack", { queue: "imports", message_id: items[0].message_id, receipt: items[0].receipt });
      await page.locator("#bulk-action").selectOption("cancel");
      await page.locator("#bulk-apply").click();
      await page.locator("#confirm-button").click();
      await page.locator("#cancel-report").waitFor();
    },
  });
}
// Last, as it stops the queue's hand-outs: a paused queue's page.
await api("POST", "/v1/queue/pause/emails");
await shoot("light", "paused", "/dashboard/queues/emails");
console.log(`screenshots: wrote ${shots.join(", ")}`);
