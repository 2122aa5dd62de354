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
  // The pool's own client class when it has one (`new pg.Pool({ Client })`:
  // e.g. one that picks the writable host of several), else pg's.
  readonly #Client: typeof pg.Client;
  #open: Promise<pg.Client> | undefined;

  constructor(pool: pg.Pool) {
    const options = (pool as unknown as { options: pg.ClientConfig & { Client?: typeof pg.Client } }).options;
    this.#options = options;
    this.#Client = options.Client ?? pg.Client;
  }

  get(): Promise<pg.Client> {
    this.#open ??= this.#connect();
    return this.#open;
  }

  #connect(): Promise<pg.Client> {
    const client = new this.#Client(this.#options);
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
