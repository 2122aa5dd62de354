//! Scoped keys (actions and queue patterns), rotation, expiry, revocation.

use jiff::SignedDuration;
use serde_json::json;

use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn publish_only_key_for_a_pattern(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.publish("billing", json!(0)).await;
    let web = s.scoped_key("alpha", "publish", "exports-*").await;
    let publish = |queue: &str| {
        s.post_as(
            &web,
            "/v1/queue/publish",
            json!({"queue": queue, "payload": 1}),
        )
    };
    publish("exports-daily").await.ok();
    let m = publish("billing").await.err(403, "FORBIDDEN");
    assert!(m.contains("billing") && m.contains("exports-*"), "{m}");
    publish("exports").await.err(403, "FORBIDDEN");
    let m = s
        .post_as(&web, "/v1/queue/consume", json!({"queue": "exports-daily"}))
        .await
        .err(403, "FORBIDDEN");
    assert!(m.contains("queue.consume") && m.contains("consume"), "{m}");
    s.get_as(&web, "/v1/queue/list").await.err(403, "FORBIDDEN");
    s.get_as(&web, "/v1/queue/stats/exports-daily")
        .await
        .err(403, "FORBIDDEN");
    s.get_as(&web, "/v1/account/usage")
        .await
        .err(403, "FORBIDDEN");
    s.post_as(&web, "/v1/queue/create", json!({"name": "exports-x"}))
        .await
        .err(403, "FORBIDDEN");
    s.post_as(
        &web,
        "/v1/queue/publish_batch",
        json!({"queue": "other", "messages": [{"payload": 1}]}),
    )
    .await
    .err(403, "FORBIDDEN");
    // nothing stored by the refusals
    assert_eq!(s.stats("exports-daily").await["message_count"], 1);
    assert_eq!(s.stats("billing").await["message_count"], 1);
    s.get("/v1/queue/stats/other")
        .await
        .err(404, "QUEUE_NOT_FOUND");
    s.get("/v1/queue/get/exports-x")
        .await
        .err(404, "QUEUE_NOT_FOUND");
}
both!(publish_only_key_for_a_pattern);

async fn consume_only_and_read_only_keys(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.publish("exports-a", json!(1)).await;
    s.publish("billing", json!(2)).await;
    let worker = s.scoped_key("alpha", "consume", "exports-*").await;
    let got = s
        .post_as(&worker, "/v1/queue/consume", json!({"queue": "exports-a"}))
        .await;
    let m = got.data()["items"][0].clone();
    let ack = json!({"queue": "exports-a", "message_id": m["message_id"], "receipt": m["receipt"]});
    assert_eq!(
        s.post_as(&worker, "/v1/queue/ack", ack).await.data()["acked"],
        true
    );
    s.post_as(&worker, "/v1/queue/consume", json!({"queue": "billing"}))
        .await
        .err(403, "FORBIDDEN");
    s.post_as(
        &worker,
        "/v1/queue/nack",
        json!({"queue": "billing", "message_id": "qmsg_x"}),
    )
    .await
    .err(403, "FORBIDDEN");
    s.post_as(
        &worker,
        "/v1/queue/publish",
        json!({"queue": "exports-a", "payload": 1}),
    )
    .await
    .err(403, "FORBIDDEN");
    assert_eq!(s.stats("billing").await["available"], 1);

    let dash = s.scoped_key("alpha", "read-only", "exports-*").await;
    let names: Vec<String> = s.get_as(&dash, "/v1/queue/list").await.data()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        ["exports-a", "exports-a-dlq"],
        "sees only its queues"
    );
    s.get_as(&dash, "/v1/queue/stats/exports-a").await.ok();
    s.get_as(&dash, "/v1/queue/get/billing")
        .await
        .err(403, "FORBIDDEN");
    s.get_as(&dash, "/v1/account/balance").await.ok();
    s.post_as(&dash, "/v1/queue/purge/exports-a", json!({}))
        .await
        .err(403, "FORBIDDEN");

    // admin on exports-*: may not point a queue's DLQ outside its queues
    let admin = s.scoped_key("alpha", "admin", "exports-*").await;
    s.post_as(
        &admin,
        "/v1/queue/create",
        json!({"name": "exports-b", "dead_letter_queue": "billing"}),
    )
    .await
    .err(403, "FORBIDDEN");
    s.post_as(&admin, "/v1/queue/create", json!({"name": "exports-b"}))
        .await
        .ok();
    s.post_as(&admin, "/v1/queue/purge/exports-b", json!({}))
        .await
        .ok();
    s.post_as(&admin, "/v1/queue/delete/billing", json!({}))
        .await
        .err(403, "FORBIDDEN");
    assert_eq!(s.stats("billing").await["message_count"], 1);
}
both!(consume_only_and_read_only_keys);

/// Push subscriptions follow the scope: listing is `read`, subscribing and
/// unsubscribing are `admin`, and the queue must match the key's patterns.
async fn push_subscriptions_follow_the_scope(b: Backend) {
    let s = TestServer::in_process(b).await;
    s.publish("exports-daily", json!(1)).await;
    s.publish("billing", json!(2)).await;
    let reader = s.scoped_key("alpha", "read", "exports-*").await;
    let r = s
        .get_as(&reader, "/v1/queue/push_subscriptions/exports-daily")
        .await;
    assert_eq!(r.ok().data()["items"], json!([]));
    let m = s
        .get_as(&reader, "/v1/queue/push_subscriptions/billing")
        .await
        .err(403, "FORBIDDEN");
    assert!(m.contains("billing") && m.contains("exports-*"), "{m}");
    let m = s
        .post_as(
            &reader,
            "/v1/queue/push_subscribe/exports-daily",
            json!({"url": "https://hooks.example.com/onceq"}),
        )
        .await
        .err(403, "FORBIDDEN");
    assert!(
        m.contains("queue.push_subscribe") && m.contains("admin"),
        "{m}"
    );
    let m = s
        .send(
            reqwest::Method::DELETE,
            "/v1/queue/push_unsubscribe/exports-daily/psub_0",
            None,
            Some(&reader),
        )
        .await
        .err(403, "FORBIDDEN");
    assert!(m.contains("queue.push_unsubscribe"), "{m}");
    let publisher = s.scoped_key("alpha", "publish", "*").await;
    s.get_as(&publisher, "/v1/queue/push_subscriptions/exports-daily")
        .await
        .err(403, "FORBIDDEN");
}
both!(push_subscriptions_follow_the_scope);

async fn rotation_keeps_both_keys_until_the_old_one_expires(b: Backend) {
    let s = TestServer::in_process(b).await;
    let old = s.scoped_key("alpha", "publish,read", "*").await;
    let store = s.state.store().as_ref();
    let old_id = s.key_id(&old).await;
    let now = s.clock.now();
    let in_an_hour = now + SignedDuration::from_hours(1);
    let (new, record) = onceq_server::auth::rotate_key(store, &old_id, Some(in_an_hour), now)
        .await
        .unwrap();
    assert_eq!(record.project, "alpha");
    assert_eq!(record.scope.actions.to_string(), "publish,read");
    for key in [&old, &new.secret] {
        s.get_as(key, "/v1/queue/list").await.ok();
        s.post_as(key, "/v1/queue/consume", json!({"queue": "q"}))
            .await
            .err(403, "FORBIDDEN");
    }
    s.clock.advance(SignedDuration::from_hours(1));
    let m = s
        .get_as(&old, "/v1/queue/list")
        .await
        .err(401, "UNAUTHORIZED");
    assert!(m.contains("expired"), "{m}");
    s.get_as(&new.secret, "/v1/queue/list").await.ok();

    // rotating without an expiry: the old one works until revoked
    let (newer, _) = onceq_server::auth::rotate_key(store, &record.key_id, None, s.clock.now())
        .await
        .unwrap();
    s.get_as(&new.secret, "/v1/queue/list").await.ok();
    store
        .key_revoke(&record.key_id, s.clock.now())
        .await
        .unwrap();
    s.get_as(&new.secret, "/v1/queue/list")
        .await
        .err(401, "UNAUTHORIZED");
    s.get_as(&newer.secret, "/v1/queue/list").await.ok();
    // a revoked key cannot be rotated
    assert!(
        onceq_server::auth::rotate_key(store, &record.key_id, None, s.clock.now())
            .await
            .is_err()
    );
}
both!(rotation_keeps_both_keys_until_the_old_one_expires);

/// A key revoked through one server's database is refused by another
/// server on the same database as soon as the revoke's notification
/// arrives (well within the test's second; milliseconds in practice).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn revocation_is_seen_by_a_second_server_at_once() {
    let (_handle, a, b) = TestServer::two_on_one_database(Default::default).await;
    let key = a.scoped_key("alpha", "full", "*").await;
    a.get_as(&key, "/v1/queue/list").await.ok();
    b.get_as(&key, "/v1/queue/list").await.ok();
    let id = a.key_id(&key).await;
    assert!(
        a.state
            .store()
            .key_revoke(&id, a.clock.now())
            .await
            .unwrap()
    );
    // The revoking process drops its cached keys before the call returns;
    // the other one on the database's notification, as the revoke commits.
    a.get_as(&key, "/v1/queue/list")
        .await
        .err(401, "UNAUTHORIZED");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    loop {
        let r = b.get_as(&key, "/v1/queue/list").await;
        if r.status == reqwest::StatusCode::UNAUTHORIZED {
            r.err(401, "UNAUTHORIZED");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the second server still accepts a revoked key after 1 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}
