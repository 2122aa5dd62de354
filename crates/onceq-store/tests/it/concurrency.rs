//! Races: concurrent publishes of one key, concurrent claimers, and (on
//! Postgres) two servers sharing one database.

use std::collections::HashSet;
use std::sync::Arc;

use onceq_store::{MessageClaim, MessagePublish, Store};
use tokio::sync::Barrier;
use tokio::task::JoinSet;

use crate::{Harness, MsgExt, msg, payload};

conformance!(
    multi_thread
    concurrent_publishes_of_one_key_store_one_message,
    concurrent_first_publishes_create_the_queue_once,
    concurrent_first_keyed_publishes_create_the_queue_once,
    concurrent_claimers_never_share_a_message,
);

const TASKS: usize = 8;

/// Runs `TASKS` copies of `f` released together, and collects their results.
async fn race<T, F, Fut>(f: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(usize) -> Fut,
    Fut: Future<Output = T> + Send + 'static,
{
    let barrier = Arc::new(Barrier::new(TASKS));
    let mut set = JoinSet::new();
    for i in 0..TASKS {
        let (barrier, fut) = (barrier.clone(), f(i));
        set.spawn(async move {
            barrier.wait().await;
            fut.await
        });
    }
    set.join_all().await
}

fn publish(h: &Harness, queue: &str, messages: Vec<onceq_store::NewMessage>) -> MessagePublish {
    MessagePublish {
        queue: h.q(queue),
        messages,
        dedupe_window: h.dedupe_window,
        new_queue_completed_retention: 0,
        now: h.now,
    }
}

async fn concurrent_publishes_of_one_key_store_one_message(h: Harness) {
    h.create("jobs", crate::defaults()).await.unwrap();
    let outs = race(|_| {
        let (store, p) = (
            h.store.clone(),
            publish(&h, "jobs", vec![msg(&payload(1)).key("k")]),
        );
        async move { store.message_publish(p).await.expect("publish").remove(0) }
    })
    .await;
    let ids: HashSet<_> = outs.iter().map(|o| o.message_id.clone()).collect();
    assert_eq!(ids.len(), 1, "everyone got the same id: {ids:?}");
    assert_eq!(
        outs.iter().filter(|o| !o.replay).count(),
        1,
        "one stored it"
    );
    assert_eq!(h.stats("jobs").await.message_count, 1);
}

async fn concurrent_first_publishes_create_the_queue_once(h: Harness) {
    let outs = race(|i| {
        let (store, p) = (
            h.store.clone(),
            publish(&h, "fresh", vec![msg(&payload(i as i64))]),
        );
        async move { store.message_publish(p).await }
    })
    .await;
    for o in &outs {
        assert!(o.is_ok(), "publish failed: {o:?}");
    }
    assert_eq!(h.stats("fresh").await.message_count, TASKS as i64);
    assert!(h.get("fresh-dlq").await.is_some());
}

/// As above with keys: a key taken under a queue another publish is still
/// creating must not fail (on PostgreSQL, publishes grouped by different
/// committers race to create the queue).
async fn concurrent_first_keyed_publishes_create_the_queue_once(h: Harness) {
    let outs = race(|i| {
        let (store, p) = (
            h.store.clone(),
            publish(
                &h,
                "fresh",
                vec![msg(&payload(i as i64)).key(&format!("k{i}"))],
            ),
        );
        async move { store.message_publish(p).await }
    })
    .await;
    for o in &outs {
        assert!(o.is_ok(), "publish failed: {o:?}");
    }
    assert_eq!(h.stats("fresh").await.message_count, TASKS as i64);
}

/// Publishes 200 messages to `queue` in batches of 10; returns their ids.
async fn publish_200(h: &Harness, queue: &str) -> HashSet<String> {
    let mut ids = HashSet::new();
    for b in 0..20 {
        let batch = (0..10).map(|i| msg(&payload(b * 10 + i))).collect();
        for o in h.publish(queue, batch).await.unwrap() {
            ids.insert(o.message_id);
        }
    }
    ids
}

/// `TASKS` claimers spread over `stores`, each claiming 10 at a time until
/// the queue is empty; every id handed out, in a flat list.
async fn claim_everything(h: &Harness, stores: &[Arc<dyn Store>], queue: &str) -> Vec<String> {
    let per_task = race(|i| {
        let store = stores[i % stores.len()].clone();
        let (q, now) = (h.q(queue), h.now);
        async move {
            let mut got = Vec::new();
            loop {
                let p = MessageClaim {
                    queue: q.clone(),
                    max: 10,
                    visibility_timeout: None,
                    now,
                };
                let batch = store.message_claim(p).await.expect("claim");
                if batch.is_empty() {
                    return got;
                }
                got.extend(batch.into_iter().map(|c| c.message_id));
            }
        }
    })
    .await;
    per_task.into_iter().flatten().collect()
}

/// Every published id handed out exactly once.
fn assert_exactly_once(published: &HashSet<String>, claimed: &[String]) {
    let unique: HashSet<String> = claimed.iter().cloned().collect();
    assert_eq!(
        claimed.len(),
        unique.len(),
        "a message was handed out twice"
    );
    assert_eq!(&unique, published, "every message handed out");
}

async fn concurrent_claimers_never_share_a_message(h: Harness) {
    let published = publish_200(&h, "jobs").await;
    let claimed = claim_everything(&h, std::slice::from_ref(&h.store), "jobs").await;
    assert_exactly_once(&published, &claimed);
    assert_eq!(h.stats("jobs").await.in_flight, 200);
}

/// Two servers on one database: `FOR UPDATE SKIP LOCKED` must keep them from
/// handing out the same message.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_two_servers_never_share_a_message() {
    let (h, stores) = two_servers().await;
    let published = publish_200(&h, "jobs").await;
    let claimed = claim_everything(&h, &stores, "jobs").await;
    assert_exactly_once(&published, &claimed);
}

/// Two PgStores on one database (two servers), the harness's first: the
/// claim's skip-locked, the FIFO group locks and the head test must hold
/// across them, so every two-server test (here and in `fifo`) starts here.
pub(crate) async fn two_servers() -> (Harness, [Arc<dyn Store>; 2]) {
    let h = Harness::postgres().await;
    let url = h.postgres_url().expect("a postgres harness");
    let second = onceq_store::postgres::PgStore::connect(url)
        .await
        .expect("second server");
    let stores: [Arc<dyn Store>; 2] = [h.store.clone(), Arc::new(second)];
    (h, stores)
}
