//! The admin API with `Idempotency-Key`: keys/revoke, keys/limits and
//! projects/limits go through the call ledger; keys/create and keys/rotate
//! do not (their answers hold a new secret, which the server never keeps).

use reqwest::Method;
use serde_json::json;

use super::{Who, call_as, in_flight_as, replays_as};
use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn new_key(s: &TestServer, ops: &str) -> String {
    let r = s
        .post_as(ops, "/v1/admin/keys/create", json!({"project": "shop"}))
        .await;
    r.ok();
    r.data()["key"]["key_id"].as_str().unwrap().to_owned()
}

async fn admin_calls(b: Backend) {
    let s = TestServer::in_process(b).await;
    let ops_key = s.scoped_key("ops", "full,accounts", "*").await;
    let ops = Who {
        key: &ops_key,
        project: "ops",
    };
    let path = "/v1/admin/projects/limits";
    let first = replays_as(
        &s,
        ops,
        Method::POST,
        path,
        Some(json!({"project": "alpha", "rate_per_sec": 100})),
        (path, Some(json!({"project": "alpha", "rate_per_sec": 200}))),
    )
    .await;
    assert_eq!(first["rate_per_sec"], 100.0);
    in_flight_as(
        &s,
        ops,
        "admin.projects.limits",
        Method::POST,
        path,
        Some(json!({"project": "beta", "rate_per_sec": 7})),
    )
    .await;

    let id = new_key(&s, &ops_key).await;
    let path = "/v1/admin/keys/limits";
    replays_as(
        &s,
        ops,
        Method::POST,
        path,
        Some(json!({"key_id": id, "rate_per_sec": 5})),
        (path, Some(json!({"key_id": id, "rate_per_sec": 6}))),
    )
    .await;

    let other = new_key(&s, &ops_key).await;
    let path = "/v1/admin/keys/revoke";
    let revoked = replays_as(
        &s,
        ops,
        Method::POST,
        path,
        Some(json!({"key_id": id})),
        (path, Some(json!({"key_id": other}))),
    )
    .await;
    assert_eq!(
        revoked["key_id"],
        id.as_str(),
        "a retried revoke is answered, not 404"
    );
    let held = json!({"key_id": other});
    in_flight_as(&s, ops, "admin.keys.revoke", Method::POST, path, Some(held)).await;

    // keys/create ignores the header: each call makes a key.
    let body = Some(json!({"project": "shop"}));
    let a = call_as(
        &s,
        ops,
        Method::POST,
        "/v1/admin/keys/create",
        body.clone(),
        "C",
    )
    .await;
    let b = call_as(&s, ops, Method::POST, "/v1/admin/keys/create", body, "C").await;
    assert_ne!(
        a.ok().data()["key"]["key_id"],
        b.ok().data()["key"]["key_id"]
    );
    assert_eq!(b.body["metadata"]["idempotent_replay"], false);
}
both!(admin_calls);
