//! The outbound caps (docs/security.md, "Outbound deliveries"): a tenant
//! whose receivers accept and never answer fills its own share of
//! deliveries, not the process's descriptors nor the other tenants'
//! slots. Each test puts a hanging receiver (`Answer::Hang`: it reads the
//! request and never answers) beside a normal one and bounds how long the
//! other project's delivery may take, with a generous margin (the
//! unloaded figure is milliseconds).

use std::time::Duration;

use onceq_server::{
    ServerConfig,
    outbound::{Cap, Kind, OutboundLimits},
};
use serde_json::{Value, json};

use crate::{
    both,
    harness::{Backend, TestServer},
    push::{
        self, SECRET,
        receiver::{Answer, Receiver},
    },
};

/// Far more than the victim needs unloaded, far less than a hanging
/// attempt's timeout (30 s for webhooks, 300 s for these subscriptions).
const VICTIM_BOUND: Duration = Duration::from_secs(10);

fn capped(limits: OutboundLimits) -> ServerConfig {
    let mut config = push::config();
    config.push.limits = limits;
    config
}

/// Subscribes `subscriptions` subscriptions of alpha's queue `tarpit` to
/// `url`, each allowed 10 deliveries at once for 300 s, and publishes 30
/// messages: room for 30 connections held open as far as the
/// subscriptions go.
async fn tarpit(s: &TestServer, url: &str, subscriptions: usize) {
    s.post("/v1/queue/create", json!({"name": "tarpit"}))
        .await
        .ok();
    for _ in 0..subscriptions {
        push::subscribe(
            s,
            "tarpit",
            url,
            json!({"max_in_flight": 10, "timeout_seconds": 300}),
        )
        .await;
    }
    let messages: Vec<Value> = (0..30).map(|n| json!({"payload": {"n": n}})).collect();
    for chunk in messages.chunks(10) {
        s.publish_batch("tarpit", chunk).await;
    }
}

/// Polls (every 10 ms, 30 s at most) until `cap` has deferred a delivery.
async fn deferred_by(s: &TestServer, cap: Cap) {
    let limits = &s.state.outbound.limits;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while limits.deferrals().find(|(c, _)| *c == cap).unwrap().1 == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no delivery was ever deferred by the {} cap",
            cap.name()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn in_flight(s: &TestServer, kind: Kind) -> i64 {
    let mut all = s.state.outbound.limits.in_flight();
    all.find(|(k, _)| *k == kind).unwrap().1
}

/// 30 deliveries' worth of hanging subscriptions in one project: it holds
/// its cap's worth of connections, its other messages stay available (not
/// leased), and another project's push delivery and API calls go through
/// at once.
async fn a_hanging_receiver_holds_only_its_projects_share(b: Backend) {
    let s = TestServer::start_with(
        b,
        capped(OutboundLimits {
            max_in_flight: 8,
            max_per_project: 4,
            ..OutboundLimits::default()
        }),
    )
    .await;
    let hang = Receiver::start([], Answer::Hang).await;
    let fine = Receiver::answering(200).await;
    tarpit(&s, &hang.url("/tarpit"), 3).await;
    hang.wait_for(4).await;
    deferred_by(&s, Cap::Project).await;
    assert_eq!(in_flight(&s, Kind::Push), 4);
    let text = s
        .http
        .get(s.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        text.contains("onceq_outbound_in_flight{kind=\"push\"} 4"),
        "{text}"
    );
    assert!(
        text.contains("onceq_outbound_limit{cap=\"project\"} 4"),
        "{text}"
    );
    let deferred = text
        .lines()
        .find(|l| l.starts_with("onceq_outbound_deferred_total{cap=\"project\"}"))
        .unwrap();
    assert_ne!(deferred.rsplit(' ').next(), Some("0"), "{text}");

    // Beta, beside it.
    let beta = &s.other_key;
    s.post_as(beta, "/v1/queue/create", json!({"name": "orders"}))
        .await
        .ok();
    s.post_as(
        beta,
        "/v1/queue/push_subscribe/orders",
        json!({"url": fine.url("/orders"), "secret": SECRET}),
    )
    .await
    .ok();
    s.post_as(
        beta,
        "/v1/queue/publish",
        json!({"queue": "orders", "payload": 1}),
    )
    .await
    .ok();
    tokio::time::timeout(VICTIM_BOUND, fine.wait_for(1))
        .await
        .expect("beta's delivery went out while alpha's receiver hangs");
    s.get_as(beta, "/v1/queue/stats/orders").await.ok();

    assert_eq!(hang.peak(), 4, "alpha holds its cap's connections, no more");
    assert_eq!(hang.seen().len(), 4);
    let stats = s.stats("tarpit").await;
    assert_eq!(
        (stats["in_flight"].as_i64(), stats["available"].as_i64()),
        (Some(4), Some(26)),
        "the messages alpha has no room for are not leased: {stats}"
    );
}
both!(a_hanging_receiver_holds_only_its_projects_share);

/// The process's cap bounds the open outbound connections whatever the
/// project's cap: the descriptors a server has are never all spent on
/// receivers that do not answer.
async fn the_process_cap_bounds_open_deliveries(b: Backend) {
    let s = TestServer::start_with(
        b,
        capped(OutboundLimits {
            max_in_flight: 3,
            ..OutboundLimits::default()
        }),
    )
    .await;
    let hang = Receiver::start([], Answer::Hang).await;
    tarpit(&s, &hang.url("/tarpit"), 3).await;
    hang.wait_for(3).await;
    deferred_by(&s, Cap::Process).await;
    assert_eq!(hang.peak(), 3);
    assert_eq!(s.stats("tarpit").await["in_flight"], 3);
}
both!(the_process_cap_bounds_open_deliveries);

/// Connections to one destination are capped across projects.
async fn the_destination_cap_bounds_one_receivers_connections(b: Backend) {
    let s = TestServer::start_with(
        b,
        capped(OutboundLimits {
            max_per_destination: 2,
            ..OutboundLimits::default()
        }),
    )
    .await;
    let hang = Receiver::start([], Answer::Hang).await;
    let fine = Receiver::answering(200).await;
    tarpit(&s, &hang.url("/tarpit"), 3).await;
    hang.wait_for(2).await;
    deferred_by(&s, Cap::Destination).await;
    // The same project still reaches another destination.
    s.post("/v1/queue/create", json!({"name": "elsewhere"}))
        .await
        .ok();
    push::subscribe(&s, "elsewhere", &fine.url("/elsewhere"), json!({})).await;
    s.publish("elsewhere", json!(1)).await;
    tokio::time::timeout(VICTIM_BOUND, fine.wait_for(1))
        .await
        .expect("alpha's other destination is not held up by the hung one");
    assert_eq!(hang.peak(), 2);
}
both!(the_destination_cap_bounds_one_receivers_connections);

/// 20 webhooks at a receiver that never answers, 40 deliveries (more than
/// the server's 32 slots): another project's event still goes out at once,
/// under the default caps.
async fn hanging_webhooks_do_not_hold_another_projects_event(b: Backend) {
    let s = TestServer::start_with(b, push::config()).await;
    let hang = Receiver::start([], Answer::Hang).await;
    let fine = Receiver::answering(204).await;
    for _ in 0..20 {
        s.post(
            "/v1/account/webhooks/register",
            json!({"url": hang.url("/hook"), "events": ["queue.created"], "secret": SECRET}),
        )
        .await
        .ok();
    }
    for q in ["one", "two"] {
        s.post("/v1/queue/create", json!({"name": q})).await.ok();
    }
    let caps = OutboundLimits::default();
    hang.wait_for(caps.webhook_max_per_project).await;
    assert_eq!(in_flight(&s, Kind::Webhook), 8);

    s.post_as(
        &s.other_key,
        "/v1/account/webhooks/register",
        json!({"url": fine.url("/hook"), "events": ["queue.created"], "secret": SECRET}),
    )
    .await
    .ok();
    s.post_as(&s.other_key, "/v1/queue/create", json!({"name": "mine"}))
        .await
        .ok();
    tokio::time::timeout(VICTIM_BOUND, fine.wait_for(1))
        .await
        .expect("beta's event went out while alpha's webhooks hang");
    assert_eq!(
        hang.peak(),
        caps.webhook_max_per_project,
        "alpha holds its share of the webhook slots, no more"
    );
}
both!(hanging_webhooks_do_not_hold_another_projects_event);
