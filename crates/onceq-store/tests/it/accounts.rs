//! Account storage: key scopes, expiry and rate overrides; project credit
//! limits and spend; usage buckets; server heartbeats.

use jiff::SignedDuration;
use onceq_store::{KeyInsert, RateLimit, ServerHeartbeat, UsageQuery, UsageRow, UsageTotal};
use onceq_types::scope::{Actions, KeyScope, QueuePatterns};

use crate::{Harness, PROJECT};

conformance!(
    key_scope_and_expiry_round_trip,
    key_rate_override,
    project_credit_and_rate,
    usage_flush_adds_and_query_sums_a_range,
    heartbeats_count_live_servers
);

async fn key_scope_and_expiry_round_trip(h: Harness) {
    let scope = KeyScope {
        actions: Actions::parse("publish,read").unwrap(),
        queues: QueuePatterns::parse("exports-*,billing").unwrap(),
    };
    let expires = h.t(3600);
    let rec = h
        .store
        .key_insert(KeyInsert {
            project: PROJECT.into(),
            key_id: "scoped".into(),
            key_hash: vec![9; 32],
            label: None,
            scope: scope.clone(),
            expires_at: Some(expires),
            now: h.now,
        })
        .await
        .unwrap();
    assert_eq!(rec.scope, scope);
    assert_eq!(rec.expires_at, Some(expires));
    let found = h.store.key_lookup(&[9; 32]).await.unwrap().unwrap();
    assert_eq!(found, rec);
    assert_eq!(h.store.key_get("scoped").await.unwrap(), Some(rec));
    assert_eq!(h.store.key_get("nope").await.unwrap(), None);

    assert!(h.store.key_set_expiry("scoped", None).await.unwrap());
    let found = h.store.key_lookup(&[9; 32]).await.unwrap().unwrap();
    assert_eq!(found.expires_at, None);
    assert!(!h.store.key_set_expiry("nope", Some(h.now)).await.unwrap());
    h.store.key_revoke("scoped", h.now).await.unwrap();
    assert!(
        !h.store.key_set_expiry("scoped", Some(h.now)).await.unwrap(),
        "a revoked key stays revoked"
    );
    let got = h.store.key_get("scoped").await.unwrap().unwrap();
    assert_eq!(got.revoked_at, Some(h.now));
}

async fn key_rate_override(h: Harness) {
    let id = format!("harness-{PROJECT}");
    let rate = RateLimit {
        per_sec: 2.5,
        burst: 7,
    };
    assert!(h.store.key_set_rate(&id, Some(rate)).await.unwrap());
    assert_eq!(
        h.store.key_get(&id).await.unwrap().unwrap().rate,
        Some(rate)
    );
    assert!(h.store.key_set_rate(&id, None).await.unwrap());
    assert_eq!(h.store.key_get(&id).await.unwrap().unwrap().rate, None);
    assert!(!h.store.key_set_rate("nope", Some(rate)).await.unwrap());
}

async fn project_credit_and_rate(h: Harness) {
    let p = h.store.project_get(PROJECT).await.unwrap().unwrap();
    assert_eq!(
        (p.credit_limit_micros, p.spent_micros, p.rate),
        (None, 0, None)
    );
    assert!(
        h.store
            .project_set_credit(PROJECT, Some(5_000_000))
            .await
            .unwrap()
    );
    let rate = RateLimit {
        per_sec: 0.0,
        burst: 1,
    };
    assert!(h.store.project_set_rate(PROJECT, Some(rate)).await.unwrap());
    let p = h.store.project_get(PROJECT).await.unwrap().unwrap();
    assert_eq!(
        (p.credit_limit_micros, p.rate),
        (Some(5_000_000), Some(rate))
    );
    assert!(!h.store.project_set_credit("nope", Some(1)).await.unwrap());
    assert!(!h.store.project_set_rate("nope", None).await.unwrap());
    assert_eq!(h.store.project_get("nope").await.unwrap(), None);

    h.as_project("other").await;
    let names: Vec<String> = h
        .store
        .project_list()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(names, ["other", PROJECT]);
    assert!(h.store.project_set_credit(PROJECT, None).await.unwrap());
    let p = h.store.project_get(PROJECT).await.unwrap().unwrap();
    assert_eq!(p.credit_limit_micros, None);
}

fn row(project: &str, cap: &str, minute: jiff::Timestamp, n: u64, cost: u64) -> UsageRow {
    UsageRow {
        project: project.into(),
        capability: cap.into(),
        minute,
        calls: n,
        billable_calls: u64::from(cost > 0) * n,
        cost_micros: cost,
    }
}

async fn usage_flush_adds_and_query_sums_a_range(h: Harness) {
    h.as_project("other").await;
    let m0 = h.t(0);
    let m1 = h.t(60);
    let m2 = h.t(120);
    h.store
        .usage_flush(vec![
            row(PROJECT, "queue.publish", m0, 3, 60),
            row(PROJECT, "queue.consume", m0, 5, 0),
            row("other", "queue.publish", m0, 1, 20),
        ])
        .await
        .unwrap();
    h.store
        .usage_flush(vec![
            row(PROJECT, "queue.publish", m0, 2, 40),
            row(PROJECT, "queue.publish", m1, 1, 20),
            row(PROJECT, "queue.publish", m2, 4, 80),
        ])
        .await
        .unwrap();
    h.store.usage_flush(vec![]).await.unwrap();

    let query = |from, to| {
        h.store.usage_query(UsageQuery {
            project: PROJECT.into(),
            from,
            to,
        })
    };
    let all = query(m0, m2 + SignedDuration::from_secs(60)).await.unwrap();
    assert_eq!(
        all,
        [
            UsageTotal {
                capability: "queue.consume".into(),
                calls: 5,
                billable_calls: 0,
                cost_micros: 0,
            },
            UsageTotal {
                capability: "queue.publish".into(),
                calls: 10,
                billable_calls: 10,
                cost_micros: 200,
            },
        ]
    );
    // [m0, m2): the minute m2 is out
    let some = query(m0, m2).await.unwrap();
    assert_eq!(some[1].calls, 6);
    assert_eq!(some[1].cost_micros, 120);
    assert_eq!(query(m2, m2).await.unwrap(), []);

    let spent = |p: &'static str| {
        let store = h.store.clone();
        async move { store.project_get(p).await.unwrap().unwrap().spent_micros }
    };
    assert_eq!(spent(PROJECT).await, 200);
    assert_eq!(spent("other").await, 20);
}

async fn heartbeats_count_live_servers(mut h: Harness) {
    let beat = |id: &str, h: &Harness| ServerHeartbeat {
        server_id: id.into(),
        now: h.now,
        live_after: h.now - SignedDuration::from_secs(3),
    };
    assert_eq!(h.store.server_heartbeat(beat("a", &h)).await.unwrap(), 1);
    assert_eq!(h.store.server_heartbeat(beat("b", &h)).await.unwrap(), 2);
    h.advance(2);
    assert_eq!(h.store.server_heartbeat(beat("a", &h)).await.unwrap(), 2);
    // b stopped beating 4 s ago: gone
    h.advance(2);
    assert_eq!(h.store.server_heartbeat(beat("a", &h)).await.unwrap(), 1);
    assert_eq!(h.store.server_heartbeat(beat("b", &h)).await.unwrap(), 2);
    h.store.server_leave("b").await.unwrap();
    assert_eq!(h.store.server_heartbeat(beat("a", &h)).await.unwrap(), 1);
}
