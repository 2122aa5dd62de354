// Which of a handler's headers are recorded, and the JSON form they take
// in the ledger's `headers` column (the Rust `StoredResponse` codec).

/** A header as sent: name (lower case) and value (latin1 characters). */
export type Header = [name: string, value: string];

/**
 * Headers never recorded: hop-by-hop ones (RFC 9110 §7.6.1) belong to one
 * connection, Content-Length and Date are recomputed on replay, and the
 * replay marker is the layer's own.
 */
const NOT_RECORDED = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "content-length",
  "date",
  "idempotent-replayed",
]);

/** The headers of an answer worth replaying, in order, repeats kept. */
export function recordableHeaders(headers: Iterable<Header>): Header[] {
  const out: Header[] = [];
  for (const [name, value] of headers) {
    const n = name.toLowerCase();
    if (!NOT_RECORDED.has(n)) out.push([n, value]);
  }
  return out;
}

/**
 * `[[name, value], …]`; a value that is not visible ASCII (space and tab
 * allowed) is stored as `[name, hex, "hex"]`, so no byte is lost.
 */
export function encodeHeaders(headers: readonly Header[]): string {
  return JSON.stringify(
    headers.map(([n, v]) =>
      /^[\t\x20-\x7e]*$/.test(v) ? [n, v] : [n, Buffer.from(v, "latin1").toString("hex"), "hex"],
    ),
  );
}

/** The column back into headers; throws on a shape it does not know. */
export function decodeHeaders(json: string): Header[] {
  const pairs: unknown = JSON.parse(json);
  if (!Array.isArray(pairs)) throw new Error("stored headers are not an array");
  return pairs.map((p: unknown): Header => {
    if (Array.isArray(p) && typeof p[0] === "string" && typeof p[1] === "string") {
      if (p.length === 2) return [p[0], p[1]];
      if (p.length === 3 && p[2] === "hex") return [p[0], Buffer.from(p[1], "hex").toString("latin1")];
    }
    throw new Error("stored header is not [name, value]");
  });
}
