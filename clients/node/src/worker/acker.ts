// Acks by batch: the acks of jobs that end within `lingerMs` of each other
// (or, while held, within one `runOnce`) go out in one call (`ackBatch`:
// the server's batch ack when it offers one, else single acks), at most 10
// at a time. A job does not wait for its ack: its slot is free at once,
// and an ack that does not land only means the message comes back and is
// found done.

import type { Client } from "../client/client.js";
import type { AckEntry } from "../client/types.js";
import type { Logger } from "./logger.js";

interface Pending {
  entry: AckEntry;
}

export interface AckCounters {
  ackCalls: number;
  batchedAckCalls: number;
  /** Acks the server refused (lease lost) or that failed. */
  ackLost: number;
}

export class Acker {
  #pending: Pending[] = [];
  #timer: NodeJS.Timeout | undefined;
  #inflight = new Set<Promise<void>>();
  #held = 0;

  constructor(
    private readonly client: Client,
    private readonly queue: string,
    private readonly lingerMs: number,
    private readonly log: Logger,
    private readonly counters: AckCounters,
  ) {}

  /** Queues an ack; it goes out within `lingerMs`, with the ten pending, or at `flush`. */
  ack(entry: AckEntry): void {
    this.#pending.push({ entry });
    if (this.#pending.length >= 10) this.#flush();
    else if (this.#held === 0) this.#timer ??= setTimeout(() => this.#flush(), this.lingerMs);
  }

  /** Until `release`, acks wait for `flush` (or ten of them) instead of the linger. */
  hold(): void {
    this.#held++;
  }

  release(): void {
    this.#held--;
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
      this.counters.ackLost += batch.filter((p) => !ok.has(p.entry.message_id)).length;
    } catch (e) {
      this.log.warn("ack failed; the messages come back and are found done", { error: String(e) });
      this.counters.ackLost += batch.length;
    }
  }
}
