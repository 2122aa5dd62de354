//! Account webhooks: records (insert, list, delete, the per-project limit,
//! tenancy), the outbox (an event makes one delivery per listening webhook,
//! once per event id; claims hold deliveries and count attempts; settling
//! reschedules or removes them) and the attempts kept, bounded.

use std::collections::HashSet;
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use onceq_store::{
    Store, StoreError, WebhookAttemptRecord, WebhookDelivery, WebhookDeliveryClaim,
    WebhookDeliverySettle, WebhookEventInsert, WebhookInsert, WebhookRecord, WebhookRef,
};
use onceq_types::webhook::MAX_ATTEMPTS_KEPT;

use crate::Harness;

conformance!(
    webhook_insert_list_delete,
    webhook_limit_per_project,
    webhook_is_per_project,
    webhook_event_goes_to_listeners_once,
    webhook_claim_holds_and_counts_attempts,
    webhook_settle_retries_or_removes,
    webhook_test_event_is_claimed_by_its_caller,
    webhook_attempts_are_bounded_newest_first,
    webhook_delete_drops_its_outbox,
    webhook_claim_takes_projects_in_turn,
);

conformance!(multi_thread webhook_claims_split_between_servers);

impl Harness {
    fn webhook(&self, url: &str, events: &[&str]) -> WebhookInsert {
        WebhookInsert {
            project: self.project.clone(),
            url: url.to_owned(),
            events: events.iter().map(|e| (*e).to_owned()).collect(),
            secret: "0123456789abcdef-secret".to_owned(),
            description: "ops".to_owned(),
            headers: Some(r#"{"x-team":"ops"}"#.to_owned()),
            max_per_project: 5,
            now: self.now,
        }
    }

    async fn register(&self, url: &str, events: &[&str]) -> WebhookRecord {
        self.store
            .webhook_insert(self.webhook(url, events))
            .await
            .expect("webhook_insert")
    }

    fn hook_ref(&self, id: &str) -> WebhookRef {
        WebhookRef {
            project: self.project.clone(),
            webhook_id: id.to_owned(),
        }
    }

    async fn event(&self, id: &str, kind: &str) -> Vec<WebhookDelivery> {
        self.store
            .webhook_event_insert(WebhookEventInsert {
                project: self.project.clone(),
                event_id: id.to_owned(),
                event_type: kind.to_owned(),
                body: format!(r#"{{"id":"{id}"}}"#),
                only_webhook: None,
                claim_until: None,
                now: self.now,
            })
            .await
            .expect("webhook_event_insert")
    }

    async fn claim_hooks(&self, limit: u32) -> Vec<WebhookDelivery> {
        claim_on(&self.store, self.now, limit).await
    }
}

async fn claim_on(store: &Arc<dyn Store>, now: Timestamp, limit: u32) -> Vec<WebhookDelivery> {
    store
        .webhook_delivery_claim(WebhookDeliveryClaim {
            now,
            claim_until: now + SignedDuration::from_secs(60),
            limit,
            per_project: u32::MAX,
            project_room: Vec::new(),
        })
        .await
        .expect("webhook_delivery_claim")
}

fn attempt(d: &WebhookDelivery, at: Timestamp, outcome: &str) -> WebhookAttemptRecord {
    WebhookAttemptRecord {
        attempted_at: at,
        event_type: d.event_type.clone(),
        event_id: d.event_id.clone(),
        attempt: d.attempt,
        outcome: outcome.to_owned(),
        status: Some(if outcome == "delivered" { 204 } else { 500 }),
        latency_ms: 12,
        error: (outcome != "delivered").then(|| "answered 500".to_owned()),
    }
}

async fn settle(
    h: &Harness,
    d: &WebhookDelivery,
    outcome: &str,
    retry_at: Option<Timestamp>,
) -> bool {
    h.store
        .webhook_delivery_settle(WebhookDeliverySettle {
            delivery_id: d.delivery_id,
            webhook_id: d.webhook.webhook_id.clone(),
            attempt: attempt(d, h.now, outcome),
            retry_at,
        })
        .await
        .expect("webhook_delivery_settle")
}

async fn webhook_insert_list_delete(h: Harness) {
    let a = h
        .register("https://a.example/hook", &["queue.created"])
        .await;
    let b = h.register("https://b.example/hook", &["*"]).await;
    assert!(a.webhook_id.starts_with("whk_"));
    assert_eq!(a.events, ["queue.created"]);
    assert_eq!(a.headers.as_deref(), Some(r#"{"x-team":"ops"}"#));
    let listed = h.store.webhook_list(&h.project).await.unwrap();
    assert_eq!(listed, vec![a.clone(), b.clone()]);
    assert_eq!(
        h.store.webhook_scan().await.unwrap(),
        vec![a.clone(), b.clone()]
    );
    assert!(
        h.store
            .webhook_delete(&h.hook_ref(&a.webhook_id))
            .await
            .unwrap()
    );
    assert!(
        !h.store
            .webhook_delete(&h.hook_ref(&a.webhook_id))
            .await
            .unwrap()
    );
    assert_eq!(h.store.webhook_list(&h.project).await.unwrap(), vec![b]);
}

async fn webhook_limit_per_project(h: Harness) {
    for i in 0..5 {
        h.register(&format!("https://h{i}.example/"), &["*"]).await;
    }
    let sixth = h
        .store
        .webhook_insert(h.webhook("https://h5.example/", &["*"]))
        .await;
    assert!(matches!(sixth, Err(StoreError::Invalid(m)) if m.contains("5 webhooks")));
    assert_eq!(h.store.webhook_list(&h.project).await.unwrap().len(), 5);
}

async fn webhook_is_per_project(h: Harness) {
    let mine = h.register("https://mine.example/", &["*"]).await;
    let other = h.as_project("other").await;
    assert!(
        other
            .store
            .webhook_list(&other.project)
            .await
            .unwrap()
            .is_empty()
    );
    // Another project can neither delete it nor read its attempts...
    assert!(
        !other
            .store
            .webhook_delete(&other.hook_ref(&mine.webhook_id))
            .await
            .unwrap()
    );
    assert_eq!(
        other
            .store
            .webhook_attempts(&other.hook_ref(&mine.webhook_id), 10)
            .await
            .unwrap(),
        None
    );
    // ... nor do its events reach it.
    assert!(other.event("evt_other1", "queue.created").await.is_empty());
    assert_eq!(h.event("evt_mine1", "queue.created").await.len(), 1);
}

async fn webhook_event_goes_to_listeners_once(h: Harness) {
    let created = h.register("https://a.example/", &["queue.created"]).await;
    let all = h.register("https://b.example/", &["*"]).await;
    let _failed = h.register("https://c.example/", &["message.failed"]).await;
    let made = h.event("evt_1", "queue.created").await;
    let to: Vec<_> = made.iter().map(|d| d.webhook.webhook_id.clone()).collect();
    assert_eq!(to, [created.webhook_id.clone(), all.webhook_id.clone()]);
    assert!(
        made.iter()
            .all(|d| d.attempt == 0 && d.body == r#"{"id":"evt_1"}"#)
    );
    // The same event id again adds nothing (a retried record).
    assert!(h.event("evt_1", "queue.created").await.is_empty());
    // Only `*` hears a type nobody names.
    let paused = h.event("evt_2", "queue.paused").await;
    assert_eq!(paused.len(), 1);
    assert_eq!(paused[0].webhook.webhook_id, all.webhook_id);
}

async fn webhook_claim_holds_and_counts_attempts(mut h: Harness) {
    h.register("https://a.example/", &["*"]).await;
    h.event("evt_1", "queue.created").await;
    h.advance(1);
    h.event("evt_2", "queue.deleted").await;
    let first = h.claim_hooks(1).await;
    assert_eq!(first.len(), 1);
    assert_eq!((first[0].event_id.as_str(), first[0].attempt), ("evt_1", 1));
    let second = h.claim_hooks(10).await;
    assert_eq!(second.len(), 1, "a held delivery is not handed out again");
    assert_eq!(second[0].event_id, "evt_2");
    assert!(h.claim_hooks(10).await.is_empty());
    // A holder that never settles: due again when its claim ends.
    h.advance(61);
    let again = h.claim_hooks(10).await;
    let ids: HashSet<_> = again
        .iter()
        .map(|d| (d.event_id.clone(), d.attempt))
        .collect();
    assert_eq!(
        ids,
        HashSet::from([("evt_1".into(), 2), ("evt_2".into(), 2)])
    );
}

async fn webhook_settle_retries_or_removes(mut h: Harness) {
    let hook = h.register("https://a.example/", &["*"]).await;
    h.event("evt_1", "queue.created").await;
    let d = h.claim_hooks(10).await.remove(0);
    let retry_at = h.now + SignedDuration::from_secs(30);
    assert!(settle(&h, &d, "retrying", Some(retry_at)).await);
    h.advance(29);
    assert!(h.claim_hooks(10).await.is_empty(), "not before its retry");
    h.advance(1);
    let d = h.claim_hooks(10).await.remove(0);
    assert_eq!((d.event_id.as_str(), d.attempt), ("evt_1", 2));
    assert_eq!(d.body, r#"{"id":"evt_1"}"#, "the same bytes every attempt");
    assert!(settle(&h, &d, "delivered", None).await);
    h.advance(3600);
    assert!(
        h.claim_hooks(10).await.is_empty(),
        "delivered: gone from the outbox"
    );
    // Settling it again finds nothing to settle.
    assert!(!settle(&h, &d, "delivered", None).await);
    let attempts = h
        .store
        .webhook_attempts(&h.hook_ref(&hook.webhook_id), 10)
        .await
        .unwrap()
        .unwrap();
    let seen: Vec<_> = attempts
        .iter()
        .map(|a| (a.attempt, a.outcome.as_str()))
        .collect();
    assert_eq!(seen, [(2, "delivered"), (2, "delivered"), (1, "retrying")]);
    assert_eq!(attempts[2].error.as_deref(), Some("answered 500"));
    assert_eq!(attempts[2].status, Some(500));
}

async fn webhook_test_event_is_claimed_by_its_caller(h: Harness) {
    let a = h.register("https://a.example/", &["queue.created"]).await;
    let _b = h.register("https://b.example/", &["*"]).await;
    let made = h
        .store
        .webhook_event_insert(WebhookEventInsert {
            project: h.project.clone(),
            event_id: "evt_test".into(),
            event_type: "webhook.test".into(),
            body: "{}".into(),
            only_webhook: Some(a.webhook_id.clone()),
            claim_until: Some(h.now + SignedDuration::from_secs(60)),
            now: h.now,
        })
        .await
        .unwrap();
    assert_eq!(
        made.len(),
        1,
        "only the named webhook, whatever it listens to"
    );
    assert_eq!(
        (made[0].webhook.webhook_id.as_str(), made[0].attempt),
        (a.webhook_id.as_str(), 1)
    );
    assert!(h.claim_hooks(10).await.is_empty(), "held by its caller");
}

async fn webhook_attempts_are_bounded_newest_first(mut h: Harness) {
    let hook = h.register("https://a.example/", &["*"]).await;
    let total = MAX_ATTEMPTS_KEPT + 5;
    for i in 0..total {
        h.event(&format!("evt_{i:04}"), "queue.created").await;
        let d = h.claim_hooks(1).await.remove(0);
        assert!(settle(&h, &d, "delivered", None).await);
        h.advance(1);
    }
    let kept = h
        .store
        .webhook_attempts(&h.hook_ref(&hook.webhook_id), 1000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(kept.len(), MAX_ATTEMPTS_KEPT);
    assert_eq!(kept[0].event_id, format!("evt_{:04}", total - 1));
    assert_eq!(kept.last().unwrap().event_id, "evt_0005");
    let two = h
        .store
        .webhook_attempts(&h.hook_ref(&hook.webhook_id), 2)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(two.len(), 2);
}

async fn webhook_delete_drops_its_outbox(h: Harness) {
    let hook = h.register("https://a.example/", &["*"]).await;
    h.event("evt_1", "queue.created").await;
    let d = h.claim_hooks(10).await.remove(0);
    assert!(
        h.store
            .webhook_delete(&h.hook_ref(&hook.webhook_id))
            .await
            .unwrap()
    );
    // An attempt in flight when it was deleted settles nothing.
    assert!(!settle(&h, &d, "delivered", None).await);
    h.event("evt_2", "queue.created").await;
    assert!(h.claim_hooks(10).await.is_empty());
}

/// Two PostgreSQL "servers" (two stores on one database) claiming at once
/// never take the same delivery; on SQLite, two tasks on one store.
async fn webhook_claims_split_between_servers(h: Harness) {
    h.register("https://a.example/", &["*"]).await;
    for i in 0..60 {
        h.event(&format!("evt_{i:03}"), "queue.created").await;
    }
    let second: Arc<dyn Store> = match h.postgres_url() {
        Some(url) => Arc::new(onceq_store::postgres::PgStore::connect(url).await.unwrap()),
        None => h.store.clone(),
    };
    let stores = [h.store.clone(), second];
    let now = h.now;
    let tasks: Vec<_> = (0..6)
        .map(|i| {
            let store = stores[i % 2].clone();
            tokio::spawn(async move {
                let mut mine = Vec::new();
                loop {
                    let got = claim_on(&store, now, 3).await;
                    if got.is_empty() {
                        return mine;
                    }
                    mine.extend(got.into_iter().map(|d| d.event_id));
                }
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let distinct: HashSet<_> = all.iter().collect();
    assert_eq!(all.len(), 60, "each delivery claimed once");
    assert_eq!(distinct.len(), 60);
}

/// One project's backlog of older deliveries does not keep another's
/// newer one waiting: projects take turns, within `per_project`, and a
/// project without room (attempts in flight elsewhere) takes none.
async fn webhook_claim_takes_projects_in_turn(mut h: Harness) {
    h.register("https://busy.example/", &["*"]).await;
    for n in 0..5 {
        h.event(&format!("evt_busy{n}"), "queue.created").await;
    }
    h.now += SignedDuration::from_secs(1);
    let other = h.as_project("other").await;
    other.register("https://quiet.example/", &["*"]).await;
    other.event("evt_quiet", "queue.created").await;
    let claim = |limit, per_project, room: Vec<(String, u32)>| WebhookDeliveryClaim {
        now: h.now,
        claim_until: h.now + SignedDuration::from_secs(60),
        limit,
        per_project,
        project_room: room,
    };
    let projects = |got: &[WebhookDelivery]| -> Vec<String> {
        let mut p: Vec<String> = got.iter().map(|d| d.webhook.project.clone()).collect();
        p.sort();
        p
    };

    // Oldest first would be five of the busy project's; turns give one each.
    let got = h
        .store
        .webhook_delivery_claim(claim(2, u32::MAX, vec![]))
        .await
        .unwrap();
    let mut both = vec![h.project.clone(), "other".to_owned()];
    both.sort();
    assert_eq!(projects(&got), both);
    // The busy project's room is used up: nothing more of it is claimed.
    let got = h
        .store
        .webhook_delivery_claim(claim(10, 3, vec![(h.project.clone(), 0)]))
        .await
        .unwrap();
    assert!(got.is_empty(), "{got:?}");
    // With room for two of its four left, it gets two, not four.
    let got = h
        .store
        .webhook_delivery_claim(claim(10, 2, vec![]))
        .await
        .unwrap();
    assert_eq!(projects(&got), [h.project.clone(), h.project.clone()]);
}
