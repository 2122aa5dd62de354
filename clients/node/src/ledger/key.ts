// The Idempotency-Key header's rules (the Rust layer's `key.rs`).

/** Longest key accepted (the seed's and the queue's limit). */
export const MAX_KEY_LEN = 255;

/** The request header, and the response header of a generated key. */
export const IDEMPOTENCY_KEY = "idempotency-key";

/** The key the client sent, none, or why it is unusable. */
export type KeyRead =
  | { kind: "key"; key: string }
  | { kind: "none" }
  | { kind: "bad"; why: "repeated" | "malformed" };

/**
 * Reads the key from every value the header arrived with (Node hands
 * header bytes over as latin1 characters): exactly one value, 1..=255
 * visible ASCII characters.
 */
export function readKey(values: readonly string[] | undefined): KeyRead {
  if (values === undefined || values.length === 0) return { kind: "none" };
  if (values.length > 1) return { kind: "bad", why: "repeated" };
  const key = values[0] as string;
  if (key.length === 0 || key.length > MAX_KEY_LEN || !/^[\x21-\x7e]+$/.test(key)) {
    return { kind: "bad", why: "malformed" };
  }
  return { kind: "key", key };
}
