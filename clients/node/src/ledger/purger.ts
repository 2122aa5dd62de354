// The background task that keeps the ledger from growing for ever.
// Expired entries already count as absent, so the purger only reclaims
// space: a late or failed pass changes no answer.
import { type Log } from "./guard.js";
import { PgLedger, type Queryable } from "./store.js";

export interface PurgerOptions {
  pool: Queryable;
  /** Milliseconds between passes (the first runs at once). */
  every: number;
  /** Where "now" comes from (default: the system clock). */
  now?: () => Date;
  log?: Log;
}

/** A running purger. */
export interface Purger {
  /** Runs one pass now; resolves to how many entries it deleted. */
  runOnce(): Promise<number>;
  /** Stops the timer and waits for a pass in progress; idempotent. */
  stop(): Promise<void>;
}

/**
 * Deletes expired ledger entries now and then every `every` ms until
 * stopped. Its timer does not keep the process alive.
 */
export function startPurger(options: PurgerOptions): Purger {
  if (!(options.every > 0)) throw new RangeError("purger `every` must be a positive number of ms");
  const ledger = new PgLedger(options.pool);
  const now = options.now ?? (() => new Date());
  const log = options.log ?? ((level, m, f) => level === "error" && console.error(`onceq purger: ${m}`, f));
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();

  const runOnce = () => {
    const pass = ledger.purgeExpired(now());
    running = pass.catch(() => {});
    return pass;
  };
  const tick = async () => {
    try {
      const n = await runOnce();
      if (n > 0) log("debug", "expired idempotency entries purged", { purged: n });
    } catch (e) {
      // Retried at the next tick; nothing depends on this pass.
      log("warn", "purging the request ledger failed", { error: e });
    }
    // After a slow pass, wait a full period rather than catch up.
    if (!stopped) timer = setTimeout(tick, options.every).unref();
  };
  void tick();
  return {
    runOnce,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
