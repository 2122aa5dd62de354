// The canonical form of a JSON body, byte for byte the one the Rust toolkit
// hashes: `serde_json::from_slice` into a `Value`, object keys sorted,
// `serde_json::to_vec` (compact). JSON.parse/JSON.stringify differ from it
// (1.0 prints as "1", 1e21 as "1e+21", integers past 2^53 lose digits), so
// this is a small parser that keeps what serde_json keeps: integers that fit
// u64/i64 exactly, every other number as the f64 serde_json's default
// (non-`float_roundtrip`) parser computes, printed the way its float
// formatter (zmij) prints it.

/** A parsed JSON value, numbers already in their printed form. */
type Value =
  | { t: "lit"; s: string } // null, true, false, and numbers
  | { t: "str"; s: string }
  | { t: "arr"; v: Value[] }
  | { t: "obj"; v: Map<string, Value> };

/** serde_json's nesting limit: its 128th nested container is an error. */
const MAX_DEPTH = 128;
const U64_MAX = (1n << 64n) - 1n;
const I64_MIN_MAGNITUDE = 1n << 63n;

class NotJson extends Error {}

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The canonical bytes of `body`, or `undefined` when serde_json would not
 * parse it (then the body is hashed raw).
 */
export function canonicalJson(body: Uint8Array): Uint8Array | undefined {
  let text: string;
  try {
    text = fatalUtf8.decode(body);
  } catch {
    return undefined;
  }
  try {
    const p = new Parser(text);
    p.ws();
    const v = p.value(MAX_DEPTH);
    p.ws();
    if (p.i !== text.length) return undefined;
    return new TextEncoder().encode(serialize(v));
  } catch (e) {
    if (e instanceof NotJson) return undefined;
    throw e;
  }
}

/**
 * The canonical form of an already parsed JavaScript value (a body an
 * Express body parser read before the middleware saw its bytes). Numbers
 * follow the same printing rules, but the source text is gone: `1.0` was
 * parsed to `1` and so prints as `1`.
 */
export function canonicalJsonOfValue(value: unknown): Uint8Array | undefined {
  const v = fromJs(value, MAX_DEPTH);
  return v === undefined ? undefined : new TextEncoder().encode(serialize(v));
}

function fromJs(x: unknown, depth: number): Value | undefined {
  if (x === null) return { t: "lit", s: "null" };
  if (typeof x === "boolean") return { t: "lit", s: String(x) };
  if (typeof x === "string") return { t: "str", s: x };
  if (typeof x === "number") {
    if (!Number.isFinite(x)) return undefined;
    // serde_json reads a number without fraction as an integer.
    if (Number.isInteger(x) && !Object.is(x, -0) && Math.abs(x) <= 2 ** 63) {
      return { t: "lit", s: BigInt(x).toString() };
    }
    return { t: "lit", s: formatF64(x) };
  }
  if (--depth === 0) return undefined;
  if (Array.isArray(x)) {
    const v: Value[] = [];
    for (const e of x) {
      const c = fromJs(e, depth);
      if (c === undefined) return undefined;
      v.push(c);
    }
    return { t: "arr", v };
  }
  if (typeof x === "object") {
    const v = new Map<string, Value>();
    for (const [k, e] of Object.entries(x as Record<string, unknown>)) {
      const c = fromJs(e, depth);
      if (c === undefined) return undefined;
      v.set(k, c);
    }
    return { t: "obj", v };
  }
  return undefined;
}

class Parser {
  i = 0;
  constructor(readonly s: string) {}

  ws(): void {
    for (;;) {
      const c = this.s.charCodeAt(this.i);
      if (c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d) this.i++;
      else return;
    }
  }

  value(depth: number): Value {
    const c = this.s[this.i];
    switch (c) {
      case "n":
        return this.word("null");
      case "t":
        return this.word("true");
      case "f":
        return this.word("false");
      case '"':
        return { t: "str", s: this.string() };
      case "[": {
        if (--depth === 0) throw new NotJson();
        this.i++;
        const v: Value[] = [];
        this.ws();
        if (this.s[this.i] === "]") {
          this.i++;
          return { t: "arr", v };
        }
        for (;;) {
          this.ws();
          v.push(this.value(depth));
          this.ws();
          const d = this.s[this.i++];
          if (d === "]") return { t: "arr", v };
          if (d !== ",") throw new NotJson();
        }
      }
      case "{": {
        if (--depth === 0) throw new NotJson();
        this.i++;
        const v = new Map<string, Value>();
        this.ws();
        if (this.s[this.i] === "}") {
          this.i++;
          return { t: "obj", v };
        }
        for (;;) {
          this.ws();
          if (this.s[this.i] !== '"') throw new NotJson();
          const k = this.string();
          this.ws();
          if (this.s[this.i++] !== ":") throw new NotJson();
          this.ws();
          // A repeated key: the last one wins, as in serde_json's map.
          v.set(k, this.value(depth));
          this.ws();
          const d = this.s[this.i++];
          if (d === "}") return { t: "obj", v };
          if (d !== ",") throw new NotJson();
        }
      }
      case "-":
        this.i++;
        return { t: "lit", s: this.number(false) };
      default:
        if (c !== undefined && c >= "0" && c <= "9") return { t: "lit", s: this.number(true) };
        throw new NotJson();
    }
  }

  word(w: string): Value {
    if (!this.s.startsWith(w, this.i)) throw new NotJson();
    this.i += w.length;
    return { t: "lit", s: w };
  }

  string(): string {
    this.i++; // the opening quote
    let out = "";
    for (;;) {
      const c = this.s.charCodeAt(this.i++);
      if (Number.isNaN(c) || c < 0x20) throw new NotJson();
      if (c === 0x22) return out;
      if (c !== 0x5c) {
        out += String.fromCharCode(c);
        continue;
      }
      const e = this.s[this.i++];
      switch (e) {
        case '"':
        case "\\":
        case "/":
          out += e;
          break;
        case "b":
          out += "\b";
          break;
        case "f":
          out += "\f";
          break;
        case "n":
          out += "\n";
          break;
        case "r":
          out += "\r";
          break;
        case "t":
          out += "\t";
          break;
        case "u": {
          const hi = this.hex4();
          if (hi >= 0xdc00 && hi <= 0xdfff) throw new NotJson(); // lone trailing surrogate
          if (hi >= 0xd800 && hi <= 0xdbff) {
            if (this.s[this.i] !== "\\" || this.s[this.i + 1] !== "u") throw new NotJson();
            this.i += 2;
            const lo = this.hex4();
            if (lo < 0xdc00 || lo > 0xdfff) throw new NotJson();
            out += String.fromCharCode(hi, lo);
          } else {
            out += String.fromCharCode(hi);
          }
          break;
        }
        default:
          throw new NotJson();
      }
    }
  }

  hex4(): number {
    const h = this.s.slice(this.i, this.i + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(h)) throw new NotJson();
    this.i += 4;
    return parseInt(h, 16);
  }

  digit(): number | undefined {
    const c = this.s.charCodeAt(this.i);
    return c >= 0x30 && c <= 0x39 ? c - 0x30 : undefined;
  }

  /** serde_json's `parse_integer` and what follows it, after the sign. */
  number(positive: boolean): string {
    const first = this.digit();
    if (first === undefined) throw new NotJson();
    this.i++;
    let sig = BigInt(first);
    if (first === 0) {
      if (this.digit() !== undefined) throw new NotJson(); // one leading zero only
    } else {
      for (let d = this.digit(); d !== undefined; d = this.digit()) {
        if (sig * 10n + BigInt(d) > U64_MAX) return this.float(positive, this.longInteger(sig));
        this.i++;
        sig = sig * 10n + BigInt(d);
      }
    }
    const c = this.s[this.i];
    if (c === ".") return this.float(positive, this.decimal(sig, 0));
    if (c === "e" || c === "E") return this.float(positive, this.exponent(sig, 0));
    if (positive) return sig.toString();
    // -0 and magnitudes past i64 become floats, as in serde_json.
    if (sig === 0n || sig > I64_MIN_MAGNITUDE) return this.float(false, { sig, exp: 0 });
    return (-sig).toString();
  }

  longInteger(sig: bigint): Parts {
    let exp = 0;
    while (this.digit() !== undefined) {
      this.i++;
      exp++;
    }
    const c = this.s[this.i];
    if (c === ".") return this.decimal(sig, exp);
    if (c === "e" || c === "E") return this.exponent(sig, exp);
    return { sig, exp };
  }

  decimal(sig: bigint, expBefore: number): Parts {
    this.i++; // '.'
    let after = 0;
    for (let d = this.digit(); d !== undefined; d = this.digit()) {
      if (sig * 10n + BigInt(d) > U64_MAX) {
        // Further digits are ignored (and, as in serde_json, not required).
        while (this.digit() !== undefined) this.i++;
        const c = this.s[this.i];
        if (c === "e" || c === "E") return this.exponent(sig, expBefore + after);
        return { sig, exp: expBefore + after };
      }
      this.i++;
      sig = sig * 10n + BigInt(d);
      after--;
    }
    if (after === 0) throw new NotJson();
    const exp = expBefore + after;
    const c = this.s[this.i];
    if (c === "e" || c === "E") return this.exponent(sig, exp);
    return { sig, exp };
  }

  exponent(sig: bigint, start: number): Parts {
    this.i++; // 'e'
    let positiveExp = true;
    if (this.s[this.i] === "+") this.i++;
    else if (this.s[this.i] === "-") {
      positiveExp = false;
      this.i++;
    }
    const first = this.digit();
    if (first === undefined) throw new NotJson();
    this.i++;
    let exp = first;
    for (let d = this.digit(); d !== undefined; d = this.digit()) {
      this.i++;
      if (exp * 10 + d > I32_MAX) {
        if (sig !== 0n && positiveExp) throw new NotJson(); // out of range
        while (this.digit() !== undefined) this.i++;
        return { sig: 0n, exp: 0 };
      }
      exp = exp * 10 + d;
    }
    const total = positiveExp ? satAdd(start, exp) : satAdd(start, -exp);
    return { sig, exp: total };
  }

  /** serde_json's `f64_from_parts` without `float_roundtrip`, printed. */
  float(positive: boolean, { sig, exp }: Parts): string {
    let f = Number(sig); // u64 → f64, round to nearest even, like `as f64`
    for (;;) {
      const abs = Math.abs(exp);
      if (abs <= 308) {
        const pow = Number(`1e${abs}`);
        if (exp >= 0) {
          f *= pow;
          if (!Number.isFinite(f)) throw new NotJson();
        } else {
          f /= pow;
        }
        break;
      }
      if (f === 0) break;
      if (exp >= 0) throw new NotJson();
      f /= 1e308;
      exp += 308;
    }
    return formatF64(positive ? f : -f);
  }
}

type Parts = { sig: bigint; exp: number };
const I32_MAX = 2 ** 31 - 1;
const satAdd = (a: number, b: number) => Math.max(-(2 ** 31), Math.min(I32_MAX, a + b));

/**
 * An f64 the way serde_json prints it (zmij): the shortest digits that
 * read back the same (which JavaScript's own conversion also finds), in
 * plain notation for decimal exponents -5..=15 (always with a fraction:
 * `1.0`, `100.0`), otherwise `d.ddde+N` / `de-N`.
 */
export function formatF64(f: number): string {
  const sign = f < 0 || Object.is(f, -0) ? "-" : "";
  const a = Math.abs(f);
  if (a === 0) return `${sign}0.0`;
  const [mant = "", e = "0"] = a.toExponential().split("e");
  const digits = mant.replace(".", "");
  const exp = Number(e);
  const n = digits.length;
  let body: string;
  if (exp >= -5 && exp <= 15) {
    if (n - 1 <= exp) body = `${digits}${"0".repeat(exp + 1 - n)}.0`;
    else if (exp >= 0) body = `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
    else body = `0.${"0".repeat(-exp - 1)}${digits}`;
  } else {
    const frac = n > 1 ? `.${digits.slice(1)}` : "";
    body = `${digits[0]}${frac}e${exp < 0 ? "-" : "+"}${Math.abs(exp)}`;
  }
  return sign + body;
}

/** Compact, keys in byte order of their UTF-8 (Rust's `String` order). */
function serialize(v: Value): string {
  switch (v.t) {
    case "lit":
      return v.s;
    case "str":
      return quote(v.s);
    case "arr":
      return `[${v.v.map(serialize).join(",")}]`;
    case "obj": {
      const keys = [...v.v.keys()].sort(utf8Order);
      return `{${keys.map((k) => `${quote(k)}:${serialize(v.v.get(k) as Value)}`).join(",")}}`;
    }
  }
}

const utf8Order = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** serde_json's escapes: `"`, `\`, and control characters only. */
function quote(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += "\\\\";
    else if (c >= 0x20) out += s[i];
    else if (c === 0x08) out += "\\b";
    else if (c === 0x09) out += "\\t";
    else if (c === 0x0a) out += "\\n";
    else if (c === 0x0c) out += "\\f";
    else if (c === 0x0d) out += "\\r";
    else out += `\\u00${c.toString(16).padStart(2, "0")}`;
  }
  return `${out}"`;
}
