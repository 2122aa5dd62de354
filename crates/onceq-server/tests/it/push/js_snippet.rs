//! The JavaScript verification snippet of `docs/api.md`, run with Node.js
//! against a real delivery: the docs' code accepts it and refuses a changed
//! body, a wrong secret and a stale timestamp.

use std::process::Command;

use serde_json::json;

use super::receiver::Receiver;
use super::{SECRET, config, jobs_subscribed};
use crate::harness::{Backend, TestServer};

/// The first ```js block after "### Verifying a delivery".
fn snippet() -> String {
    let api = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/api.md"))
        .expect("docs/api.md");
    let section = &api[api.find("### Verifying a delivery").expect("the section")..];
    let start = section.find("```js\n").expect("a js block") + "```js\n".len();
    let len = section[start..].find("```").expect("its end");
    section[start..start + len].to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_docs_js_snippet_verifies_a_real_delivery() {
    let s = TestServer::start_with(Backend::Sqlite, config()).await;
    let hook = Receiver::answering(200).await;
    jobs_subscribed(&s, &hook.url("/hook"), json!({})).await;
    s.publish("jobs", json!({"to": "a@example.com", "n": [1, 2]}))
        .await;
    let d = &hook.wait_for(1).await[0];

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("verify.mjs"), snippet()).unwrap();
    let input = json!({
        "secret": SECRET,
        "headers": {
            "onceq-timestamp": d.header("onceq-timestamp"),
            "onceq-signature": d.header("onceq-signature"),
        },
        "body_hex": hex::encode(&d.body),
        "now": s.clock.now().as_second(),
    });
    std::fs::write(dir.path().join("input.json"), input.to_string()).unwrap();
    std::fs::write(
        dir.path().join("main.mjs"),
        r#"
import { readFileSync } from "node:fs";
import { verifyOnceq } from "./verify.mjs";
const i = JSON.parse(readFileSync(new URL("./input.json", import.meta.url)));
const body = Buffer.from(i.body_hex, "hex");
console.log(JSON.stringify([
  verifyOnceq(i.secret, i.headers, body, i.now),
  verifyOnceq(i.secret, i.headers, Buffer.concat([body, Buffer.from(" ")]), i.now),
  verifyOnceq("another-secret-0123456789", i.headers, body, i.now),
  verifyOnceq(i.secret, i.headers, body, i.now + 301),
  verifyOnceq(i.secret, { ...i.headers, "onceq-signature": "v1=00" }, body, i.now),
]));
"#,
    )
    .unwrap();
    let out = Command::new("node")
        .arg(dir.path().join("main.mjs"))
        .output()
        .expect("node must be installed for this test");
    assert!(
        out.status.success(),
        "node failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "[true,false,false,false,false]"
    );
}
