// The app's database: a pool, and the `exports` table the worker writes.
//
// DATABASE_URL may name several hosts as libpq reads them
// (`postgres://u@h1:5432,h2:5432/db?target_session_attrs=read-write`), which
// node-postgres does not: then each new connection goes to the host that
// last took a write, checked with `SHOW transaction_read_only`, and moves
// on to the next host when that one refuses or is a standby. That is what
// keeps the app writing through a failover (the chaos run promotes the
// standby while the app runs); a single-host URL is a plain `pg.Pool`.
import { readFileSync } from "node:fs";

import pg from "pg";

const EXPORTS_SQL = readFileSync(new URL("../exports.sql", import.meta.url), "utf8");

/** A pool on `url`; errors of idle connections (a restarted database) are logged, not fatal. */
export function pool(url, log, max = 16) {
  const { urls, connectTimeoutMs } = splitHosts(url);
  const options = { max, ...(connectTimeoutMs && { connectionTimeoutMillis: connectTimeoutMs }) };
  const p =
    urls.length === 1
      ? new pg.Pool({ ...options, connectionString: urls[0] })
      : new pg.Pool({ ...options, Client: writableClient(urls, connectTimeoutMs) });
  p.on("error", (e) => log.warn("idle database connection lost", { error: e.message }));
  return p;
}

/**
 * Runs `step` (a start-up step: creating tables) until it succeeds, the
 * wait doubling from 100 ms to 2 s: the database may be restarting or
 * failing over when the process starts.
 */
export async function atStart(what, step, log) {
  for (let wait = 100; ; wait = Math.min(wait * 2, 2000)) {
    try {
      return await step();
    } catch (e) {
      log.warn(`${what} failed; trying again`, { error: e.message, wait_ms: wait });
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

/**
 * Creates `exports` if missing (exports.sql). One simple query: its
 * statements run as one implicit transaction, so the advisory lock holds
 * to the end; `pool.query` listens for the connection's errors meanwhile.
 */
export async function ensureExportsTable(p) {
  await p.query(EXPORTS_SQL);
}

/** One single-host URL per host, in order, and `connect_timeout` (ms). */
export function splitHosts(url) {
  const m = /^([a-z]+:\/\/)([^@/?#]*@)?([^/?#]*)([^?#]*)(\?[^#]*)?$/i.exec(url);
  if (!m) return { urls: [url], connectTimeoutMs: undefined };
  const [, scheme, user = "", hosts, path, query = ""] = m;
  const params = new URLSearchParams(query.slice(1));
  const timeout = params.get("connect_timeout");
  params.delete("target_session_attrs");
  params.delete("connect_timeout");
  const rest = params.toString() ? `?${params}` : "";
  const list = hosts.split(",").filter(Boolean);
  return {
    urls: (list.length ? list : [""]).map((h) => `${scheme}${user}${h}${path}${rest}`),
    connectTimeoutMs: timeout ? Number(timeout) * 1000 : undefined,
  };
}

/**
 * A `pg.Client` class for `pg.Pool`'s `Client` option that connects only to
 * a host of `urls` that takes writes. Which one does is known (the last
 * that did) or being found: after a connection to it fails, one search at a
 * time tries every host with a probe connection until one answers
 * `transaction_read_only = off`, and connections made meanwhile wait for
 * its answer instead of failing on the wrong host.
 */
function writableClient(urls, connectTimeoutMs = 2000) {
  // Where each URL points (the URLs differ only in host and port).
  const targets = urls.map((u) => {
    const { host, port } = new pg.Client({ connectionString: u });
    return { host, port };
  });
  let known = 0;
  let search;
  const probe = async (i) => {
    const c = new pg.Client({ connectionString: urls[i], connectionTimeoutMillis: connectTimeoutMs });
    c.on("error", () => {});
    try {
      await c.connect();
      const r = await c.query("SHOW transaction_read_only");
      return r.rows[0]?.transaction_read_only === "off";
    } catch {
      return false;
    } finally {
      c.end().catch(() => {});
    }
  };
  // Every host in turn, starting after the one that failed, for up to ~10 s.
  const find = async (after) => {
    for (let round = 0; round < 20; round++) {
      for (let k = 1; k <= urls.length; k++) {
        const i = (after + k) % urls.length;
        if (await probe(i)) return i;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    return after;
  };
  const lost = (at) => {
    if (search || known !== at) return;
    search = find(at).then((i) => {
      known = i;
      search = undefined;
      return i;
    });
  };
  return class WritableClient extends pg.Client {
    constructor(config) {
      super({ ...config, connectionString: urls[known] });
    }

    connect(callback) {
      const connected = this.connectWritable();
      if (!callback) return connected;
      connected.then(() => callback(null), callback);
      return undefined;
    }

    async connectWritable() {
      const at = search ? await search : known;
      // Built on another host's URL, perhaps: point it at the chosen one.
      this.host = targets[at].host;
      this.port = targets[at].port;
      // The pool listens for this client's errors once connect returns; a
      // break before that (during the probe query) reaches the query, and
      // its "error" event must not end the process. Left on when the
      // connection is given up, for what arrives after (a shutdown notice).
      const meanwhile = () => {};
      this.on("error", meanwhile);
      try {
        await super.connect();
        const r = await this.query("SHOW transaction_read_only");
        if (r.rows[0]?.transaction_read_only !== "off") throw new Error(`host ${at + 1} of ${urls.length} is read-only (a standby)`);
        this.off("error", meanwhile);
        return this;
      } catch (e) {
        lost(at);
        this.end().catch(() => {});
        throw e;
      }
    }
  };
}
