// The request fingerprint, byte for byte the Rust toolkit's: the case
// table's vectors (computed by the Rust code), and the canonical JSON they
// go through.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { canonicalJson, fingerprint, formatF64, isJson, scope } from "../dist/ledger/index.js";

const table = JSON.parse(readFileSync(new URL("../sql/cases/ledger.json", import.meta.url), "utf8"));
const utf8 = (s) => Buffer.from(s, "utf8");

test("the table has fingerprint vectors", () => assert.ok(table.fingerprints.length > 0));

for (const v of table.fingerprints) {
  test(`fingerprint: ${v.note ?? v.body_text}`, () => {
    const ct = v.content_type ?? "application/json";
    const canonical = isJson(ct) ? canonicalJson(utf8(v.body_text)) : undefined;
    assert.equal(canonical === undefined ? null : Buffer.from(canonical).toString("utf8"), v.canonical);
    const fp = fingerprint(v.method, v.route, ct, { bytes: utf8(v.body_text) });
    assert.equal(fp.toString("hex"), v.hex);
  });
}

test("key order and whitespace do not matter; content does", () => {
  const fp = (body) => fingerprint("POST", "/x", "application/json; charset=utf-8", { bytes: utf8(body) }).toString("hex");
  assert.equal(fp('{"a":1,"b":{"d":2,"c":[1,{"z":1,"y":2}]}}'), fp('{ "b": {"c": [1, {"y":2,"z":1}], "d": 2}, "a": 1 }'));
  assert.notEqual(fp('{"a":1}'), fp('{"a":2}'));
});

test("what serde_json refuses is hashed raw", () => {
  for (const bad of ['{"a":1,}', "[1,]", "01", "1.", ".5", "1e", '"\\ud800"', '"\\udc00"', "nul", '{"a" 1}', "1e400", "\ufeff{}", '"a\tb"']) {
    assert.equal(canonicalJson(utf8(bad)), undefined, bad);
  }
  assert.equal(canonicalJson(Buffer.from([0x22, 0xe9, 0x22])), undefined, "not UTF-8");
  const deep = (n) => "[".repeat(n) + "]".repeat(n);
  assert.ok(canonicalJson(utf8(deep(127))), "127 levels parse");
  assert.equal(canonicalJson(utf8(deep(128))), undefined, "128 levels are over serde_json's limit");
});

test("numbers print as serde_json prints them", () => {
  const c = (s) => Buffer.from(canonicalJson(utf8(s))).toString("utf8");
  assert.equal(c("1e-400"), "0.0");
  assert.equal(c("-1e-400"), "-0.0");
  assert.equal(c("0e99999999999"), "0.0");
  assert.equal(c("-9223372036854775809"), "-9.223372036854776e+18");
  assert.equal(c("18446744073709551616"), "1.8446744073709552e+19");
  assert.equal(c("123456789012345678901234567890.5"), "1.2345678901234568e+29");
  assert.equal(formatF64(1e15), "1000000000000000.0");
  assert.equal(formatF64(1e16), "1e+16");
  assert.equal(formatF64(0.00001), "0.00001");
  assert.equal(formatF64(0.000001), "1e-6");
});

test("scopes are length-prefixed, so spaces cannot shift a principal into the route", () => {
  assert.notEqual(scope("a GET", "POST", "/x"), scope("a", "GET", "POST /x"));
  assert.equal(scope("é", "POST", "/x"), "2:é POST /x");
});
