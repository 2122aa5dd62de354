// Acks by batch: the acks of jobs that end within `lingerMs` of each other
// go out in one call (`ackBatch`: the server's batch ack when it offers
// one, else single acks), at most 10 at a time.

import type { Client } from "../client/client.js";
import type { AckEntry } from "../client/types.js";
import type { Logger } from "./logger.js";

interface Pending {
  entry: AckEntry;
  done: (acked: boolean) => void;
}

export interface AckCounters {
  ackCalls: number;
  batchedAckCalls: number;
}

export class Acker {
  #pending: Pending[] = [];
  #timer: NodeJS.Timeout | undefined;
  #inflight = new Set<Promise<void>>();

  constructor(
    private readonly client: Client,
    private readonly queue: string,
    private readonly lingerMs: number,
    private readonly log: Logger,
    private readonly counters: AckCounters,
  ) {}

  /** True when the server acked it; false when the lease was lost or the call failed. */
  ack(entry: AckEntry): Promise<boolean> {
    return new Promise((done) => {
      this.#pending.push({ entry, done });
      if (this.#pending.length >= 10) this.#flush();
      else this.#timer ??= setTimeout(() => this.#flush(), this.lingerMs);
    });
  }

  /** Sends what is pending and waits for every call out. */
  async flush(): Promise<void> {
    this.#flush();
    await Promise.all(this.#inflight);
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#pending.splice(0, this.#pending.length);
    if (batch.length === 0) return;
    const call = this.#send(batch);
    this.#inflight.add(call);
    void call.finally(() => this.#inflight.delete(call));
  }

  async #send(batch: Pending[]): Promise<void> {
    try {
      const r = await this.client.ackBatch(
        this.queue,
        batch.map((p) => p.entry),
      );
      this.counters.ackCalls += r.batched ? Math.ceil(batch.length / 10) : batch.length;
      if (r.batched) this.counters.batchedAckCalls += Math.ceil(batch.length / 10);
      const ok = new Set(r.successful.map((s) => s.message_id));
      for (const f of r.failed) {
        this.log.info("ack refused (lease lost); the next holder finds the fact done", {
          message_id: f.message_id,
          code: f.code,
          message: f.message,
        });
      }
      for (const p of batch) p.done(ok.has(p.entry.message_id));
    } catch (e) {
      this.log.warn("ack failed; the messages come back and are found done", { error: String(e) });
      for (const p of batch) p.done(false);
    }
  }
}
