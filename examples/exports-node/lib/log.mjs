// One line per event on stderr, `<time> LEVEL message key=value …`, as the
// Rust example's tracing lines read: the chaos run counts the worker's
// `job settled … outcome=… message_id=…` and `ack refused (lease lost)`
// lines in either. Debug lines only when EXPORTS_LOG asks for them
// (`debug`, or the Rust example's `info,onceq::worker=debug`).

const debugOn = /\b(debug|trace)\b/.test(process.env.EXPORTS_LOG ?? "");

function line(level, message, fields) {
  const parts = [new Date().toISOString(), level.padStart(5), message];
  for (const [k, v] of Object.entries(fields ?? {})) {
    if (v === undefined) continue;
    const text = typeof v === "string" ? v : v instanceof Error ? v.message : JSON.stringify(v);
    parts.push(`${k}=${String(text).replace(/\s+/g, "_")}`);
  }
  process.stderr.write(`${parts.join(" ")}\n`);
}

/** The `Logger` the package's worker takes, and the app's own log. */
export const log = {
  debug: (m, f) => debugOn && line("DEBUG", m, f),
  info: (m, f) => line("INFO", m, f),
  warn: (m, f) => line("WARN", m, f),
  error: (m, f) => line("ERROR", m, f),
};

/** The middleware's and the purger's `log(level, message, fields)`. */
export const ledgerLog = (level, m, f) => (log[level] ?? log.info)(m, f);
