// A message's whole life in the dashboard, driven in a real browser
// against a real `onceq serve` (started by
// crates/onceq-cli/tests/it/dashboard_life.rs, which passes ONCEQ_BASE and
// ONCEQ_API_KEY). The story: a message nacked with an error shows the
// error and its attempts on its page; a dead letter's error shows in the
// dead-letter list; a completed message shows on the queue's completed
// page with its result, and on its own page; the nacked message (delayed
// by its nack) is cancelled from its page through the confirmation step;
// a queue is made to keep finished messages from its settings form (a
// refused value first, the API's error on the form), and a selection of
// its messages is cancelled from the queue page, the report saying what
// happened to each.
// Any script error or Content-Security-Policy violation on a page fails
// the run.
import assert from "node:assert/strict";
import { client, launch, waitFor } from "./lib.mjs";

const base = process.env.ONCEQ_BASE;
const key = process.env.ONCEQ_API_KEY;
assert.ok(base && key, "ONCEQ_BASE and ONCEQ_API_KEY must be set");
const api = client(base, key);

const { page, close } = await launch();
const problems = [];
page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
page.on("console", (m) => {
  if (m.type() === "error") problems.push(`console error: ${m.text()}`);
});
page.on("response", (r) => {
  if (r.status() >= 400 && r.status() !== 401) problems.push(`${r.status()} from ${r.url()}`);
});

const text = async (selector) => ((await page.locator(selector).textContent()) ?? "").trim();
const step = (s) => console.log(`life: ${s}`);

const publish = async (payload) =>
  (await api("POST", "/v1/queue/publish", { queue: "imports", payload })).message_id;
const consume = async (id) => {
  const { items } = await api("POST", "/v1/queue/consume", { queue: "imports", max_messages: 1 });
  assert.equal(items[0].message_id, id);
  return items[0];
};

try {
  await page.goto(base + "/dashboard/signin");
  await page.getByLabel("API key").fill(key);
  await page.keyboard.press("Enter");
  await page.waitForURL(base + "/dashboard");
  step("signed in");

  await api("POST", "/v1/queue/create", { name: "imports", completed_retention_seconds: 3600 });

  // Nacked with an error: the error and the attempt on the message page.
  const failing = await publish({ file: "a.csv" });
  let lease = await consume(failing);
  await api("POST", "/v1/queue/nack", {
    queue: "imports", message_id: failing, receipt: lease.receipt,
    error: "ValueError: row 7 has <no> date", delay_seconds: 3600,
  });
  await page.goto(`${base}/dashboard/queues/imports/messages/${failing}`);
  assert.ok((await text("#message-last-error")).includes("ValueError: row 7 has <no> date"));
  const attempt = page.locator("#attempts tbody tr").first();
  assert.ok((await attempt.textContent()).includes("nacked"));
  assert.ok((await attempt.textContent()).includes("ValueError: row 7"));
  assert.equal(await page.locator("#attempts tbody tr").count(), 1);
  step("a nacked message shows its error and attempts");

  // A dead letter's error in the dead-letter list.
  const dead = await publish({ file: "b.csv" });
  lease = await consume(dead);
  await api("POST", "/v1/queue/nack", {
    queue: "imports", message_id: dead, receipt: lease.receipt,
    requeue: false, error: "gave up: upstream timed out",
  });
  await page.goto(`${base}/dashboard/queues/imports/dlq`);
  await page.locator(`#error-${dead}`).waitFor();
  assert.ok((await text(`#error-${dead}`)).includes("gave up: upstream timed out"));
  assert.equal(await text(`tr#row-${dead} td[data-label="Deliveries"]`), "1");
  step("a dead letter's error in the DLQ list");

  // Completed, with its result, on the completed page and its own.
  const done = await publish({ file: "c.csv" });
  lease = await consume(done);
  await api("POST", "/v1/queue/ack", {
    queue: "imports", message_id: done, receipt: lease.receipt, result: { rows: 7 },
  });
  await page.goto(`${base}/dashboard/queues/imports`);
  await page.locator("#completed-link").click();
  await page.waitForURL(`${base}/dashboard/queues/imports/completed`);
  await page.locator(`#msg-${done}`).waitFor();
  assert.ok((await text(`tr#row-${done} td[data-label="Result"]`)).includes('"rows":7'));
  await page.locator(`#msg-${done}`).click();
  await page.waitForURL(`${base}/dashboard/queues/imports/messages/${done}`);
  assert.equal(await text("#message-state"), "completed");
  assert.ok((await text("#message-result")).includes('"rows": 7'));
  step("a completed message with its result");

  // Cancel the first one (delayed by its nack), confirming.
  await page.goto(`${base}/dashboard/queues/imports/messages/${failing}`);
  await page.locator("#cancel-one").click();
  await page.locator("#confirm-what").waitFor();
  assert.ok((await text("#confirm-what")).includes(`cancel message ${failing}`));
  await page.locator("#confirm-button").click();
  await page.waitForURL(/done=cancelled/);
  assert.ok((await text("#flash")).includes(`Cancelled ${failing}.`));
  await waitFor("the cancelled state on screen", async () => (await text("#message-state")) === "cancelled");
  const detail = await api("GET", `/v1/queue/message/imports/${failing}`);
  assert.equal(detail.state, "cancelled");
  step("cancelled through the confirmation");

  // Keeping finished messages, set from the settings form: a refused
  // value shows the API's error on the field and changes nothing.
  await api("POST", "/v1/queue/create", { name: "reports" });
  await page.goto(`${base}/dashboard/queues/reports/settings`);
  const keep = page.getByLabel("Keep finished, seconds");
  assert.equal(await keep.inputValue(), "0");
  await keep.fill("9999999");
  await page.locator("#save-settings").click();
  await page.locator("#settings-error").waitFor();
  assert.ok((await text("#settings-error")).includes("completed_retention_seconds"));
  assert.equal(await page.getByLabel("Keep finished, seconds").getAttribute("aria-invalid"), "true");
  assert.equal((await api("GET", "/v1/queue/get/reports")).completed_retention_seconds, 0);
  // The refusal's own 400 (and the console line Chromium logs for it)
  // is the point here, not a problem: excused once each.
  for (const refused of [/^400 from .*\/settings$/, /^console error: .*status of 400/]) {
    await waitFor(`the refused save's 400 (${refused})`, () => problems.some((p) => refused.test(p)));
    const at = problems.findIndex((p) => refused.test(p));
    problems.splice(at, 1);
  }
  await page.getByLabel("Keep finished, seconds").fill("7200");
  await page.locator("#save-settings").click();
  await page.waitForURL(/updated=yes/);
  assert.ok((await text("#keeps-finished")).includes("2 h 0 m"));
  assert.equal((await api("GET", "/v1/queue/get/reports")).completed_retention_seconds, 7200);
  step("completed_retention_seconds set from the settings form");

  // Bulk cancel: two waiting messages and one held by a consumer,
  // selected, confirmed, reported one by one; kept as cancelled.
  const picked = [];
  for (const n of [1, 2, 3]) {
    picked.push((await api("POST", "/v1/queue/publish", { queue: "reports", payload: { n } })).message_id);
  }
  const { items } = await api("POST", "/v1/queue/consume", { queue: "reports", max_messages: 1 });
  assert.equal(items[0].message_id, picked[0]);
  await page.goto(`${base}/dashboard/queues/reports`);
  for (const id of picked) await page.locator(`#sel-${id}`).check();
  await page.locator("#bulk-action").selectOption("cancel");
  await page.locator("#bulk-apply").click();
  await page.locator("#confirm-what").waitFor();
  assert.ok((await text("#confirm-what")).includes("3 messages"));
  assert.equal((await api("GET", "/v1/queue/stats/reports")).message_count, 3, "nothing before confirming");
  await page.locator("#confirm-button").click();
  await page.locator("#cancel-report").waitFor();
  assert.ok((await text("#cancel-report")).includes("Cancelled 3 of 3 selected"));
  for (const id of picked) {
    assert.equal(await text(`#cancel-${id} .badge`), "cancelled");
    assert.equal((await api("GET", `/v1/queue/message/reports/${id}`)).state, "cancelled");
  }
  const acked = await api("POST", "/v1/queue/ack", { queue: "reports", message_id: picked[0], receipt: items[0].receipt });
  assert.equal(acked.acked, false, "the held one's consumer can no longer ack it");
  // The Completed tab leads to them.
  await page.locator("#back-to-queue").click();
  await page.locator("#completed-tab").click();
  await page.waitForURL(`${base}/dashboard/queues/reports/completed`);
  for (const id of picked) await page.locator(`#msg-${id}`).waitFor();
  step("a selection cancelled, each reported, listed as completed/cancelled");

  assert.deepEqual(problems, [], "no script errors or CSP violations");
  console.log("life: browser story passed");
} finally {
  await close();
}
