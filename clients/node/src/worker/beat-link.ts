// The heartbeats' own database connection, outside the pool: every running
// job holds a pooled connection for its transaction, so with `concurrency`
// at the pool's size a heartbeat waiting for a pooled connection would wait
// for a job to end, and no lease would be pushed (see the Rust toolkit's
// worker/beat_link.rs). One connection, opened with the pool's own settings,
// carries every job's heartbeat (pg queues concurrent queries on it); a
// broken one is replaced on the next beat.

import pg from "pg";

export class BeatLink {
  readonly #options: pg.ClientConfig;
  #open: Promise<pg.Client> | undefined;

  constructor(pool: pg.Pool) {
    this.#options = (pool as unknown as { options: pg.ClientConfig }).options;
  }

  get(): Promise<pg.Client> {
    this.#open ??= this.#connect();
    return this.#open;
  }

  #connect(): Promise<pg.Client> {
    const client = new pg.Client(this.#options);
    const forget = () => {
      if (this.#open === opened) this.#open = undefined;
    };
    client.on("error", forget);
    client.on("end", forget);
    const opened: Promise<pg.Client> = client.connect().then(
      () => client,
      (e: unknown) => {
        forget();
        throw e;
      },
    );
    return opened;
  }

  async close(): Promise<void> {
    const open = this.#open;
    this.#open = undefined;
    if (open) await open.then((c) => c.end()).catch(() => {});
  }
}
