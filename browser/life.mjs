// A message's whole life in the dashboard, driven in a real browser
// against a real `onceq serve` (started by
// crates/onceq-cli/tests/it/dashboard_life.rs, which passes ONCEQ_BASE and
// ONCEQ_API_KEY). The story: a message nacked with an error shows the
// error and its attempts on its page; a dead letter's error shows in the
// dead-letter list; a completed message shows on the queue's completed
// page with its result, and on its own page; the nacked message (delayed
// by its nack) is cancelled from its page through the confirmation step.
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

  assert.deepEqual(problems, [], "no script errors or CSP violations");
  console.log("life: browser story passed");
} finally {
  await close();
}
