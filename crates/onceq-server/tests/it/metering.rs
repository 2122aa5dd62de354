//! Usage metering, balance and credit limits.

use onceq_server::ServerConfig;
use serde_json::{Value, json};

use crate::{
    both,
    harness::{Backend, TestServer},
};

/// Publish and publish_batch priced at 20 micro-USD a message; the account
/// sync runs when the test says.
async fn priced(b: Backend) -> TestServer {
    TestServer::in_process_with(b, TestServer::manual_sync(TestServer::priced())).await
}

fn item<'a>(usage: &'a Value, cap: &str) -> &'a Value {
    usage["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["capability"] == cap)
        .unwrap_or_else(|| panic!("no {cap} in {usage}"))
}

async fn usage_counts_calls_and_never_charges_replays(b: Backend) {
    let s = priced(b).await;
    let p = |body: Value| s.post("/v1/queue/publish", body);
    let r = p(json!({"queue": "jobs", "payload": 1, "idempotency_key": "a"})).await;
    assert_eq!(r.body["metadata"]["cost_usd"], 0.00002);
    let r = p(json!({"queue": "jobs", "payload": 1, "idempotency_key": "a"})).await;
    assert_eq!(r.body["metadata"]["idempotent_replay"], true);
    assert_eq!(r.body["metadata"]["cost_usd"], 0.0);
    p(json!({"queue": "jobs", "payload": 2})).await.ok();
    let batch = json!({"queue": "jobs", "messages": [
        {"payload": 3, "idempotency_key": "b"}, {"payload": 4}]});
    let r = s.post("/v1/queue/publish_batch", batch.clone()).await;
    assert_eq!(r.body["metadata"]["cost_usd"], 0.00004);
    // again: the keyed item is a replay, the other one is new
    let r = s.post("/v1/queue/publish_batch", batch).await;
    assert_eq!(r.body["metadata"]["cost_usd"], 0.00002);
    s.post("/v1/queue/consume", json!({"queue": "jobs"}))
        .await
        .ok();
    s.get("/v1/queue/list").await.ok();
    // errors are not counted
    p(json!({"queue": "bad name", "payload": 1}))
        .await
        .err(400, "INVALID_PARAMS");
    s.get("/v1/queue/stats/nope")
        .await
        .err(404, "QUEUE_NOT_FOUND");

    let check = |u: &Value| {
        let publish = item(u, "queue.publish");
        assert_eq!(
            (&publish["calls"], &publish["billable_calls"]),
            (&json!(3), &json!(2))
        );
        assert_eq!(publish["cost_usd"], 0.00004);
        let batch = item(u, "queue.publish_batch");
        assert_eq!(
            (&batch["calls"], &batch["billable_calls"]),
            (&json!(2), &json!(2))
        );
        assert_eq!(batch["cost_usd"], 0.00006);
        let consume = item(u, "queue.consume");
        assert_eq!(
            (&consume["calls"], &consume["billable_calls"]),
            (&json!(1), &json!(0))
        );
        assert_eq!(consume["cost_usd"], 0.0);
        assert_eq!(item(u, "queue.list")["calls"], 1);
        assert!(
            u["items"]
                .as_array()
                .unwrap()
                .iter()
                .all(|i| i["capability"] != "queue.stats"),
            "failed calls are not counted: {u}"
        );
        assert_eq!(u["total_cost_usd"], 0.0001);
        assert_eq!(u["project"], "alpha");
    };
    // before the usage is written: this server's own counts
    let u = s.get("/v1/account/usage").await;
    u.ok();
    check(u.data());
    // after: the same, from the store
    s.sync().await;
    let u = s.get("/v1/account/usage").await;
    check(u.data());
    assert_eq!(item(u.data(), "account.usage")["calls"], 1);

    // the range: nothing in the next hour, nothing before now
    let later = (s.clock.now() + jiff::SignedDuration::from_hours(1)).to_string();
    let r = s
        .get(&format!("/v1/account/usage?from={later}&to={later}"))
        .await;
    assert_eq!(r.data()["items"], json!([]));
    let now = s.clock.now().to_string();
    let r = s
        .get(&format!(
            "/v1/account/usage?from=2020-01-01T00:00:00Z&to={now}"
        ))
        .await;
    assert_eq!(
        r.data()["items"],
        json!([]),
        "[from, to) excludes now's minute"
    );
    let m = s
        .get("/v1/account/usage?from=yesterday")
        .await
        .err(400, "INVALID_PARAMS");
    assert!(m.contains("from"), "{m}");
    let m = s
        .get("/v1/account/usage?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z")
        .await
        .err(400, "INVALID_PARAMS");
    assert!(m.contains("after"), "{m}");

    // another project's usage is its own
    let r = s.get_as(&s.other_key, "/v1/account/usage").await;
    assert_eq!(r.data()["items"], json!([]));
    // no limit: balance is null, spend is known
    let r = s.get("/v1/account/balance").await;
    assert_eq!(r.data()["balance_usd"], Value::Null);
    assert_eq!(r.data()["credit_limit_usd"], Value::Null);
    assert_eq!(r.data()["spent_usd"], 0.0001);
    assert_eq!(r.data()["currency"], "USD");
}
both!(usage_counts_calls_and_never_charges_replays);

async fn past_the_credit_limit_billable_calls_are_402_and_reads_work(b: Backend) {
    let s = priced(b).await;
    // 50 micro-USD: two publishes (20 each) fit, a third does not
    assert!(
        s.state
            .store()
            .project_set_credit("alpha", Some(50))
            .await
            .unwrap()
    );
    s.sync().await;
    let publish = |n: i64| {
        s.post(
            "/v1/queue/publish",
            json!({"queue": "jobs", "payload": n, "idempotency_key": format!("k{n}")}),
        )
    };
    publish(1).await.ok();
    publish(2).await.ok();
    let m = publish(3).await.err(402, "INSUFFICIENT_CREDIT");
    assert!(m.contains("nothing was done"), "{m}");
    let r = s
        .post(
            "/v1/queue/publish_batch",
            json!({"queue": "jobs", "messages": [{"payload": 9}]}),
        )
        .await;
    r.err(402, "INSUFFICIENT_CREDIT");
    assert_eq!(r.body["error"]["retryable"], false);
    let stats = s.stats("jobs").await;
    assert_eq!(stats["message_count"], 2, "nothing stored past the limit");

    // reads and free calls keep working
    s.get("/v1/queue/list").await.ok();
    let got = s
        .post(
            "/v1/queue/consume",
            json!({"queue": "jobs", "max_messages": 10}),
        )
        .await;
    let items = got.data()["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 2);
    let ack = json!({"queue": "jobs", "message_id": items[0]["message_id"], "receipt": items[0]["receipt"]});
    assert_eq!(s.post("/v1/queue/ack", ack).await.data()["acked"], true);
    let bal = s.get("/v1/account/balance").await;
    assert_eq!(bal.data()["balance_usd"], 0.00001);
    assert_eq!(bal.data()["spent_usd"], 0.00004);
    assert_eq!(bal.data()["credit_limit_usd"], 0.00005);

    // the same after the usage is written and re-read
    s.sync().await;
    publish(3).await.err(402, "INSUFFICIENT_CREDIT");
    let bal = s.get("/v1/account/balance").await;
    assert_eq!(bal.data()["balance_usd"], 0.00001);
    // another project is not affected
    s.post_as(
        &s.other_key,
        "/v1/queue/publish",
        json!({"queue": "jobs", "payload": 1}),
    )
    .await
    .ok();

    // more credit: works again once the server re-reads it
    s.state
        .store()
        .project_set_credit("alpha", Some(1_000))
        .await
        .unwrap();
    s.sync().await;
    publish(3).await.ok();
    assert_eq!(s.stats("jobs").await["message_count"], 2);
}
both!(past_the_credit_limit_billable_calls_are_402_and_reads_work);

async fn concurrent_publishes_never_overspend_one_server(b: Backend) {
    let s = priced(b).await;
    s.state
        .store()
        .project_set_credit("alpha", Some(200))
        .await
        .unwrap();
    s.sync().await;
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..30 {
        let req = s
            .http
            .post(s.url("/v1/queue/publish"))
            .bearer_auth(&s.key)
            .json(&json!({"queue": "jobs", "payload": n}));
        calls.spawn(async move { req.send().await.unwrap().status().as_u16() });
    }
    let statuses = calls.join_all().await;
    let ok = statuses.iter().filter(|s| **s == 200).count();
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 402),
        "{statuses:?}"
    );
    assert_eq!(ok, 10, "exactly the credit's worth of publishes");
    assert_eq!(s.stats("jobs").await["message_count"], 10);
    s.sync().await;
    let bal = s.get("/v1/account/balance").await;
    assert_eq!(bal.data()["balance_usd"], 0.0);
}
both!(concurrent_publishes_never_overspend_one_server);

async fn per_call_prices_are_charged_and_reported(b: Backend) {
    let config = ServerConfig {
        prices: onceq_server::pricing::PriceTable::parse("queue.list=0.000005").unwrap(),
        ..TestServer::manual_sync(ServerConfig::default())
    };
    let s = TestServer::in_process_with(b, config).await;
    let r = s.get("/v1/queue/list").await;
    assert_eq!(r.body["metadata"]["cost_usd"], 0.000005);
    let r = s.get("/v1/queue/stats/nope").await;
    assert_eq!(r.body["metadata"]["cost_usd"], 0.0);
    s.state
        .store()
        .project_set_credit("alpha", Some(5))
        .await
        .unwrap();
    s.sync().await;
    s.get("/v1/queue/list")
        .await
        .err(402, "INSUFFICIENT_CREDIT");
    let u = s.get("/v1/account/usage").await;
    let list = item(u.data(), "queue.list");
    assert_eq!(
        (&list["calls"], &list["billable_calls"]),
        (&json!(1), &json!(1))
    );
    assert_eq!(list["cost_usd"], 0.000005);
}
both!(per_call_prices_are_charged_and_reported);

/// Two servers on one database: each knows the other's spend as of its
/// last sync, so a project can overspend by at most what the other server
/// charged since — the documented tolerance — and not once both synced.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_enforce_one_credit_limit_within_one_sync() {
    let config = || TestServer::manual_sync(TestServer::priced());
    let (_handle, a, b) = TestServer::two_on_one_database(config).await;
    // 100 micro-USD: five publishes at 20
    a.state
        .store()
        .project_set_credit("alpha", Some(100))
        .await
        .unwrap();
    a.sync().await;
    b.sync().await;
    async fn publish(s: &TestServer, key: &str) -> crate::harness::Res {
        s.post_as(
            key,
            "/v1/queue/publish",
            json!({"queue": "jobs", "payload": 1}),
        )
        .await
    }
    let mut admitted = 0;
    for _ in 0..3 {
        admitted += usize::from(publish(&a, &a.key).await.status == 200);
    }
    // b has not heard of a's 60 yet: it admits its own 100
    for _ in 0..6 {
        admitted += usize::from(publish(&b, &a.key).await.status == 200);
    }
    assert_eq!(admitted, 3 + 5, "overspend = what a charged since b's sync");
    // once both wrote their usage and read the other's, both refuse
    a.sync().await;
    b.sync().await;
    a.sync().await;
    publish(&a, &a.key).await.err(402, "INSUFFICIENT_CREDIT");
    publish(&b, &a.key).await.err(402, "INSUFFICIENT_CREDIT");
    let bal = a.get("/v1/account/balance").await;
    assert_eq!(bal.data()["spent_usd"], 0.00016);
    assert_eq!(bal.data()["balance_usd"], 0.0);
    assert_eq!(a.stats("jobs").await["message_count"], 8);
}
