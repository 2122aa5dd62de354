// The worker's small rules, as the Rust toolkit states them: what a job
// fact is called, and how long a failure's text may be on a nack.
import assert from "node:assert/strict";
import test from "node:test";

import { errorText, jobFact } from "../dist/index.js";

test("job fact: payload.job_fact, else the publish key, else the message id", () => {
  const m = (payload, key) => ({ payload, idempotency_key: key, message_id: "qmsg_1" });
  assert.equal(jobFact(m({ job_fact: "export:a" }, "k")), "export:a");
  assert.equal(jobFact(m({ job_fact: "" }, "k")), "k");
  assert.equal(jobFact(m({ job_fact: 7 }, "k")), "k");
  assert.equal(jobFact(m([1], "k")), "k");
  assert.equal(jobFact(m({}, null)), "qmsg_1");
  assert.equal(jobFact(m("text", "")), "qmsg_1");
});

test("a failure's text is its message, cut to 8 KiB at a character boundary", () => {
  assert.equal(errorText(new Error("disk full")), "disk full");
  assert.equal(errorText("plain"), "plain");
  const long = errorText(new Error("é".repeat(8192)));
  assert.ok(Buffer.byteLength(long) <= 8192 && Buffer.byteLength(long) >= 8191);
  assert.ok(!long.includes("\uFFFD"), "no broken character at the cut");
});
