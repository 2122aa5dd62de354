// The environment contract, the Rust example's (examples/exports): the same
// variables, defaults and on/off spellings, so the chaos run starts either.
// A bad value stops the process at start with the variable's name.

const ON = new Set(["1", "true", "yes", "on", "y", "t"]);
const OFF = new Set(["0", "false", "no", "off", "n", "f", ""]);

/** A string setting, or its default. */
export function text(name, fallback) {
  const v = process.env[name];
  return v === undefined || v === "" ? fallback : v;
}

/** A whole number of at least `min`, or its default (undefined: none). */
export function whole(name, fallback, min = 0) {
  const v = process.env[name];
  if (v === undefined || v === "") return fallback;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min) fail(name, `a whole number of at least ${min}, not ${JSON.stringify(v)}`);
  return n;
}

/** On/off as onceq's settings spell it (`1`, `true`, `yes`, `on`, any case). */
export function flag(name) {
  const v = (process.env[name] ?? "").trim().toLowerCase();
  if (ON.has(v)) return true;
  if (OFF.has(v)) return false;
  return fail(name, `on or off (1/0, true/false, yes/no, on/off), not ${JSON.stringify(v)}`);
}

/** What both processes share: the app's database, the queue server, the queue. */
export function common() {
  const apiKey = text("ONCEQ_API_KEY", "");
  if (!apiKey) fail("ONCEQ_API_KEY", "set (the onceq server's API key)");
  return {
    databaseUrl: text("DATABASE_URL", "postgres://localhost/exports"),
    onceqUrl: text("ONCEQ_URL", "http://127.0.0.1:8787"),
    apiKey,
    queue: text("EXPORTS_QUEUE", "api-enqueue-jobs"),
  };
}

function fail(name, rule) {
  console.error(`exports: ${name} must be ${rule}`);
  process.exit(2);
}
