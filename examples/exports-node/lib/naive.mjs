// The seed's worker *without* its job-fact guard: take a message, write the
// export, ack. Kept only as a deliberately broken pipeline for the chaos
// run's teeth: a redelivery (a lease that ran out, a crash before the ack)
// builds the export a second time, and the checker must say so.
import { setTimeout as sleep } from "node:timers/promises";

export async function runNaive({ client, pool, queue, visibilitySecs, workMs, log }) {
  let stopping = false;
  const stop = () => {
    stopping = true;
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  while (!stopping) {
    let messages;
    try {
      messages = await client.consume(queue, { maxMessages: 10, visibilityTimeout: visibilitySecs, waitSeconds: 1 });
    } catch (e) {
      log.warn("consume failed", { error: String(e?.message ?? e) });
      await sleep(200);
      continue;
    }
    for (const m of messages) {
      const fact = typeof m.payload?.job_fact === "string" ? m.payload.job_fact : m.message_id;
      await sleep(workMs);
      try {
        await pool.query("INSERT INTO exports (job_fact, tenant, format) VALUES ($1, $2, $3)", [
          fact,
          m.payload?.tenant ?? null,
          m.payload?.format ?? null,
        ]);
        await client.ack(queue, m.message_id).catch(() => {});
      } catch (e) {
        log.warn("export not written", { error: String(e?.message ?? e) });
      }
    }
  }
}
