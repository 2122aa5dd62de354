// What a request is, for the ledger: its fingerprint (method, route,
// canonical body) and its scope (caller + method + route). The same bytes
// as the Rust toolkit's `fingerprint.rs`, so a Node app and a Rust app on
// one ledger agree on which requests are the same.
import { createHash } from "node:crypto";

import { canonicalJson, canonicalJsonOfValue } from "./canonical-json.js";

/** A request body as an adapter has it. */
export type BodyBytes =
  /** The bytes on the wire (what the Rust layer hashes). */
  | { bytes: Uint8Array }
  /** Only a parsed JSON value is left (a body parser ran first). */
  | { parsed: unknown };

/**
 * SHA-256 over the method, the route, the kind ("json" or "raw") and the
 * body, each part prefixed with its length as a big-endian u64, so no two
 * part lists hash alike by shifting bytes from one part into the next.
 * JSON bodies (by Content-Type) are hashed in canonical form (keys sorted,
 * compact), so key order and whitespace do not matter; other bodies and
 * JSON that does not parse are hashed raw.
 */
export function fingerprint(
  method: string,
  route: string,
  contentType: string | undefined,
  body: BodyBytes,
): Buffer {
  const json = isJson(contentType);
  let kind = "raw";
  let bytes: Uint8Array;
  if ("bytes" in body) {
    const canonical = json ? canonicalJson(body.bytes) : undefined;
    if (canonical) kind = "json";
    bytes = canonical ?? body.bytes;
  } else {
    const canonical = canonicalJsonOfValue(body.parsed);
    if (canonical && json) kind = "json";
    bytes = canonical ?? new Uint8Array();
  }
  return fingerprintOfParts([
    Buffer.from(method),
    Buffer.from(route),
    Buffer.from(kind),
    bytes,
  ]);
}

/** The length-prefixed SHA-256 of a list of parts (`Fingerprint::of_parts_list`). */
export function fingerprintOfParts(parts: Uint8Array[]): Buffer {
  const h = createHash("sha256");
  for (const p of parts) {
    const len = Buffer.alloc(8);
    len.writeBigUInt64BE(BigInt(p.length));
    h.update(len);
    h.update(p);
  }
  return h.digest();
}

/** `application/json` or any `application/…+json` type. */
export function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined || !isVisibleAscii(contentType)) return false;
  const essence = (contentType.split(";")[0] ?? "").trim().toLowerCase();
  return (
    essence === "application/json" ||
    (essence.startsWith("application/") && essence.endsWith("+json"))
  );
}

/** What `HeaderValue::to_str` accepts: visible ASCII, space and tab. */
function isVisibleAscii(s: string): boolean {
  return /^[\t\x20-\x7e]*$/.test(s);
}

/**
 * The ledger scope: a key means one thing per caller and per route. The
 * principal is length-prefixed (its UTF-8 length), so a principal holding
 * spaces cannot pass for another principal + route pair.
 */
export function scope(principal: string, method: string, route: string): string {
  return `${Buffer.byteLength(principal)}:${principal} ${method} ${route}`;
}

/**
 * The default principal: SHA-256 (hex) of the `Authorization` header's
 * bytes, so the ledger never stores a credential; undefined without one
 * (the caller is then "anonymous").
 */
export function principalOfAuthorization(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  // Node hands header bytes over as latin1 characters.
  return createHash("sha256").update(Buffer.from(authorization, "latin1")).digest("hex");
}
