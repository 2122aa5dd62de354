//! FIFO queues: within a message group strictly publish order and at most one
//! message in flight; groups in parallel. Alone, then under 8 concurrent
//! claimers with random nacks, and (on Postgres) across two "servers".
//!
//! Over 400 lines: the single-claimer cases, the concurrent run and the
//! two-server run share one set of group/order checks, kept beside them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use onceq_store::{
    ClaimedMessage, DlqRedrive, LeaseRef, MessageAck, MessageClaim, MessageNack, MessagePublish,
    NewMessage, Store, StoreError,
};
use onceq_types::{QueueType, queue::QueueSettings};
use tokio::task::JoinSet;

use crate::{Harness, MsgExt, concurrency::two_servers, fifo, msg, payloads};

conformance!(
    fifo_create_keeps_type_and_a_standard_dlq,
    fifo_dead_letter_queue_must_be_standard,
    fifo_order_within_a_group_under_repeated_claims,
    fifo_at_most_one_in_flight_per_group,
    fifo_nack_blocks_the_group_and_the_same_message_comes_back,
    fifo_delayed_nack_blocks_the_group,
    fifo_delayed_publish_blocks_the_group,
    fifo_dead_lettering_the_head_unblocks_the_group,
    fifo_last_retry_dead_letters_and_unblocks,
    fifo_purge_unblocks_the_group,
    fifo_groups_in_parallel_in_one_claim,
    fifo_default_group,
    fifo_standard_queue_ignores_groups,
    fifo_priority_is_ignored,
    fifo_lease_expiry_keeps_order,
    fifo_dedupe_as_on_standard_queues,
    fifo_redrive_appends_at_the_group_tail,
);

conformance!(
    multi_thread
    fifo_order_with_8_concurrent_claimers_and_random_nacks,
    fifo_order_with_concurrent_publishers_and_claimers,
);

/// `{"g":"<group>","i":<i>}`.
fn gp(group: &str, i: usize) -> String {
    format!(r#"{{"g":"{group}","i":{i}}}"#)
}

/// A message of `group` with payload `gp(group, i)`.
fn gm(group: &str, i: usize) -> NewMessage {
    msg(&gp(group, i)).group(group)
}

/// Creates the FIFO queue `orders` (DLQ `orders-dlq`).
async fn fifo_queue(h: &Harness) {
    h.create("orders", fifo()).await.unwrap();
}

async fn fifo_create_keeps_type_and_a_standard_dlq(h: Harness) {
    let created = h.create("orders", fifo()).await.unwrap();
    assert!(created.created);
    assert_eq!(created.record.queue_type, QueueType::Fifo);
    assert_eq!(
        created.record.dead_letter_queue.as_deref(),
        Some("orders-dlq")
    );
    assert_eq!(h.get("orders").await.unwrap().queue_type, QueueType::Fifo);
    assert_eq!(
        h.get("orders-dlq").await.unwrap().queue_type,
        QueueType::Standard
    );
    // Same settings again: the existing queue; as standard: a conflict.
    assert!(!h.create("orders", fifo()).await.unwrap().created);
    assert!(matches!(
        h.create("orders", crate::defaults()).await,
        Err(StoreError::QueueAlreadyExists(_))
    ));
}

async fn fifo_dead_letter_queue_must_be_standard(h: Harness) {
    h.create("ordered", fifo()).await.unwrap();
    let err = h.create("jobs", crate::with_dlq("ordered")).await;
    assert!(matches!(err, Err(StoreError::Invalid(_))), "{err:?}");
    // An existing `<name>-dlq` that is FIFO cannot become the default DLQ,
    // neither by create nor by a first publish.
    h.create("pay-dlq", fifo()).await.unwrap();
    let err = h.create("pay", crate::defaults()).await;
    assert!(matches!(err, Err(StoreError::Invalid(_))), "{err:?}");
    let err = h.publish("pay", vec![msg("{}")]).await;
    assert!(matches!(err, Err(StoreError::Invalid(_))), "{err:?}");
    assert!(h.get("pay").await.is_none());
    assert!(h.get("jobs").await.is_none());
}

async fn fifo_order_within_a_group_under_repeated_claims(h: Harness) {
    fifo_queue(&h).await;
    let batch = (0..5).map(|i| gm("a", i)).collect();
    h.publish("orders", batch).await.unwrap();
    for i in 5..10 {
        h.publish_msg("orders", gm("a", i)).await;
    }
    for i in 0..10 {
        let got = h.claim("orders", 10).await;
        assert_eq!(payloads(&got), vec![gp("a", i)], "claim {i}");
        assert!(
            h.ack("orders", &got[0].message_id, Some(&got[0].receipt))
                .await
        );
    }
    assert!(h.claim("orders", 10).await.is_empty());
}

async fn fifo_at_most_one_in_flight_per_group(h: Harness) {
    fifo_queue(&h).await;
    h.publish("orders", (0..3).map(|i| gm("a", i)).collect())
        .await
        .unwrap();
    let first = h.claim("orders", 10).await;
    assert_eq!(payloads(&first), vec![gp("a", 0)]);
    for _ in 0..3 {
        assert!(h.claim("orders", 10).await.is_empty(), "the group waits");
    }
    let s = h.stats("orders").await;
    assert_eq!((s.in_flight, s.available), (1, 2));
    // Extending the lease changes nothing about the group.
    assert!(
        h.extend("orders", &first[0].message_id, Some(&first[0].receipt), 60)
            .await
            .extended
    );
    assert!(h.claim("orders", 10).await.is_empty());
    assert!(
        h.ack("orders", &first[0].message_id, Some(&first[0].receipt))
            .await
    );
    assert_eq!(payloads(&h.claim("orders", 10).await), vec![gp("a", 1)]);
}

async fn fifo_nack_blocks_the_group_and_the_same_message_comes_back(h: Harness) {
    fifo_queue(&h).await;
    let p0 = h.publish_msg("orders", gm("a", 0)).await;
    h.publish_msg("orders", gm("a", 1)).await;
    let c = h.claim_one("orders").await;
    assert_eq!(c.message_id, p0.message_id);
    let out = h.nack_claimed("orders", &c, true).await;
    assert!(out.requeued);
    let again = h.claim("orders", 10).await;
    assert_eq!(payloads(&again), vec![gp("a", 0)], "the head comes back");
    assert_eq!(again[0].delivery_count, 2);
    assert_ne!(again[0].receipt, c.receipt);
}

async fn fifo_delayed_nack_blocks_the_group(mut h: Harness) {
    fifo_queue(&h).await;
    h.publish("orders", vec![gm("a", 0), gm("a", 1), gm("b", 0)])
        .await
        .unwrap();
    let got = h.claim("orders", 10).await;
    assert_eq!(payloads(&got), vec![gp("a", 0), gp("b", 0)]);
    let a0 = &got[0];
    let out = h
        .nack("orders", &a0.message_id, Some(&a0.receipt), true, 10)
        .await;
    assert!(out.requeued);
    // a0 is delayed, not in flight, and still blocks a1.
    assert!(h.claim("orders", 10).await.is_empty());
    h.advance(9);
    assert!(h.claim("orders", 10).await.is_empty());
    h.advance(1);
    let back = h.claim("orders", 10).await;
    assert_eq!(payloads(&back), vec![gp("a", 0)]);
    assert_eq!(back[0].message_id, a0.message_id);
}

async fn fifo_delayed_publish_blocks_the_group(mut h: Harness) {
    fifo_queue(&h).await;
    h.publish("orders", vec![gm("a", 0).delay(5), gm("a", 1), gm("b", 0)])
        .await
        .unwrap();
    assert_eq!(payloads(&h.claim("orders", 10).await), vec![gp("b", 0)]);
    h.advance(5);
    assert_eq!(payloads(&h.claim("orders", 10).await), vec![gp("a", 0)]);
}

async fn fifo_dead_lettering_the_head_unblocks_the_group(h: Harness) {
    fifo_queue(&h).await;
    h.publish("orders", vec![gm("a", 0), gm("a", 1)])
        .await
        .unwrap();
    let c = h.claim_one("orders").await;
    let out = h.nack_claimed("orders", &c, false).await;
    assert!(out.dead_lettered);
    assert_eq!(payloads(&h.claim("orders", 10).await), vec![gp("a", 1)]);
    assert_eq!(h.claim_one("orders-dlq").await.message_id, c.message_id);
}

async fn fifo_last_retry_dead_letters_and_unblocks(h: Harness) {
    let settings = QueueSettings {
        max_retries: 1,
        ..fifo()
    };
    h.create("orders", settings).await.unwrap();
    h.publish("orders", vec![gm("a", 0), gm("a", 1)])
        .await
        .unwrap();
    for n in 1..=2 {
        let c = h.claim("orders", 10).await;
        assert_eq!(payloads(&c), vec![gp("a", 0)], "hand-out {n}");
        let out = h.nack_claimed("orders", &c[0], true).await;
        assert_eq!(out.dead_lettered, n == 2);
    }
    assert_eq!(payloads(&h.claim("orders", 10).await), vec![gp("a", 1)]);
    assert_eq!(h.stats("orders").await.dead_lettered, 1);
}

async fn fifo_purge_unblocks_the_group(h: Harness) {
    fifo_queue(&h).await;
    h.publish("orders", vec![gm("a", 0), gm("a", 1)])
        .await
        .unwrap();
    h.claim_one("orders").await;
    assert_eq!(h.store.queue_purge(&h.q("orders")).await.unwrap(), 2);
    h.publish_msg("orders", gm("a", 2)).await;
    assert_eq!(payloads(&h.claim("orders", 10).await), vec![gp("a", 2)]);
}

async fn fifo_groups_in_parallel_in_one_claim(h: Harness) {
    fifo_queue(&h).await;
    let batch = vec![gm("a", 0), gm("b", 0), gm("a", 1), gm("c", 0), gm("b", 1)];
    h.publish("orders", batch).await.unwrap();
    let got = h.claim("orders", 10).await;
    assert_eq!(
        payloads(&got),
        vec![gp("a", 0), gp("b", 0), gp("c", 0)],
        "each group's head, oldest first"
    );
    // `max` caps how many groups one claim serves.
    let b0 = &got[1];
    assert!(h.ack("orders", &b0.message_id, Some(&b0.receipt)).await);
    assert_eq!(payloads(&h.claim("orders", 10).await), vec![gp("b", 1)]);
    let a0 = &got[0];
    assert!(h.ack("orders", &a0.message_id, Some(&a0.receipt)).await);
    assert_eq!(payloads(&h.claim("orders", 1).await), vec![gp("a", 1)]);
}

async fn fifo_default_group(h: Harness) {
    fifo_queue(&h).await;
    // No group and the group named `default` are one group.
    h.publish(
        "orders",
        vec![msg(&gp("-", 0)), msg(&gp("-", 1)).group("default")],
    )
    .await
    .unwrap();
    h.publish_one("orders", &gp("-", 2)).await;
    for i in 0..3 {
        let got = h.claim("orders", 10).await;
        assert_eq!(payloads(&got), vec![gp("-", i)]);
        assert!(h.ack("orders", &got[0].message_id, None).await);
    }
}

async fn fifo_standard_queue_ignores_groups(h: Harness) {
    h.create("jobs", crate::defaults()).await.unwrap();
    h.publish("jobs", (0..3).map(|i| gm("a", i)).collect())
        .await
        .unwrap();
    assert_eq!(h.claim("jobs", 10).await.len(), 3);
}

async fn fifo_priority_is_ignored(h: Harness) {
    fifo_queue(&h).await;
    h.publish(
        "orders",
        vec![
            gm("a", 0),
            gm("b", 0).priority(5),
            gm("a", 1).priority(10),
            gm("c", 0).priority(100),
        ],
    )
    .await
    .unwrap();
    let got = h.claim("orders", 10).await;
    assert_eq!(payloads(&got), vec![gp("a", 0), gp("b", 0), gp("c", 0)]);
}

async fn fifo_lease_expiry_keeps_order(mut h: Harness) {
    fifo_queue(&h).await;
    h.publish("orders", vec![gm("a", 0), gm("a", 1), gm("b", 0)])
        .await
        .unwrap();
    let first = h.claim("orders", 1).await;
    assert_eq!(payloads(&first), vec![gp("a", 0)]);
    h.advance(31);
    let expiry = h.lease_expire(100).await;
    assert_eq!(expiry.requeued, 1);
    let got = h.claim("orders", 10).await;
    assert_eq!(payloads(&got), vec![gp("a", 0), gp("b", 0)]);
    assert_eq!(got[0].message_id, first[0].message_id);
    assert_eq!(got[0].delivery_count, 2);
    // The stale receipt cannot ack; the new one can, and the group moves on.
    assert!(
        !h.ack("orders", &first[0].message_id, Some(&first[0].receipt))
            .await
    );
    assert!(
        h.ack("orders", &got[0].message_id, Some(&got[0].receipt))
            .await
    );
    assert_eq!(payloads(&h.claim("orders", 10).await), vec![gp("a", 1)]);
}

async fn fifo_dedupe_as_on_standard_queues(h: Harness) {
    fifo_queue(&h).await;
    let first = h.publish_msg("orders", gm("a", 0).key("k")).await;
    let again = h.publish_msg("orders", gm("a", 0).key("k")).await;
    assert!(again.replay);
    assert_eq!(again.message_id, first.message_id);
    let err = h.publish("orders", vec![gm("a", 1).key("k")]).await;
    assert!(matches!(err, Err(StoreError::IdempotencyKeyReused { .. })));
    h.publish_msg("orders", gm("a", 1).key("k2")).await;
    assert_eq!(h.stats("orders").await.message_count, 2);
    let c = h.claim("orders", 10).await;
    assert_eq!(payloads(&c), vec![gp("a", 0)]);
    assert!(h.ack("orders", &c[0].message_id, None).await);
    // The key outlives the message.
    let replay = h.publish_msg("orders", gm("a", 0).key("k")).await;
    assert!(replay.replay);
    assert_eq!(payloads(&h.claim("orders", 10).await), vec![gp("a", 1)]);
}

async fn fifo_redrive_appends_at_the_group_tail(h: Harness) {
    fifo_queue(&h).await;
    h.publish("orders", (0..3).map(|i| gm("a", i)).collect())
        .await
        .unwrap();
    let a0 = h.claim_one("orders").await;
    assert!(h.nack_claimed("orders", &a0, false).await.dead_lettered);
    let a1 = h.claim_one("orders").await;
    assert_eq!(a1.payload, gp("a", 1));
    // A dead letter published straight into the DLQ, without a group, joins
    // the default group on its way back.
    h.publish_one("orders-dlq", &gp("-", 0)).await;

    let out = h
        .store
        .dlq_redrive(DlqRedrive {
            queue: h.q("orders"),
            max: None,
            now: h.now,
        })
        .await
        .unwrap();
    assert_eq!(out.redriven, 2);
    // a0 is back behind a2, and does not jump ahead of a1 in flight.
    assert_eq!(payloads(&h.claim("orders", 10).await), vec![gp("-", 0)]);
    assert!(h.ack("orders", &a1.message_id, Some(&a1.receipt)).await);
    let a2 = h.claim("orders", 10).await;
    assert_eq!(payloads(&a2), vec![gp("a", 2)]);
    assert!(h.ack("orders", &a2[0].message_id, None).await);
    let back = h.claim("orders", 10).await;
    assert_eq!(payloads(&back), vec![gp("a", 0)]);
    assert_eq!(back[0].message_id, a0.message_id);
    assert_eq!(back[0].delivery_count, 1, "redrive resets the count");
    // Published after the redrive: behind it.
    h.publish_msg("orders", gm("a", 3)).await;
    assert!(h.ack("orders", &back[0].message_id, None).await);
    assert_eq!(payloads(&h.claim("orders", 10).await), vec![gp("a", 3)]);
}

// ---------------------------------------------------------------- concurrency

const CLAIMERS: usize = 8;
const GROUPS: usize = 5;

/// What the claimers saw, checked as it happens: per group, the message in
/// flight (at most one) and the acks in order.
#[derive(Default)]
struct Ledger {
    in_flight: HashMap<String, String>,
    acked: HashMap<String, Vec<usize>>,
    acks: usize,
    nacks: usize,
}

/// `(group, i)` of a payload made by [`gp`] (or by the publishers below,
/// which add `"p"`).
fn parse(payload: &str) -> (String, usize, usize) {
    let v: serde_json::Value = serde_json::from_str(payload).unwrap();
    (
        v["g"].as_str().unwrap().to_owned(),
        v["i"].as_u64().unwrap() as usize,
        v["p"].as_u64().unwrap_or(0) as usize,
    )
}

/// `CLAIMERS` tasks spread over `stores`, each looping claim (1 to 3) → for
/// every message a random nack (requeue, 30 %) or an ack, until `total`
/// messages are acked. A claim that hands out a message of a group that
/// already has one in flight fails the test at once. The in-flight mark is
/// cleared *before* the ack or nack is sent: once it is sent, the store may
/// hand out the next one.
async fn run_claimers(h: &Harness, stores: &[Arc<dyn Store>], queue: &str, total: usize) -> Ledger {
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let mut set = JoinSet::new();
    for t in 0..CLAIMERS {
        let store = stores[t % stores.len()].clone();
        let (q, now, ledger) = (h.q(queue), h.now, ledger.clone());
        set.spawn(async move {
            let mut idle = 0u32;
            loop {
                if ledger.lock().unwrap().acks >= total {
                    return;
                }
                let p = MessageClaim {
                    queue: q.clone(),
                    max: 1 + rand::random::<u32>() % 3,
                    visibility_timeout: None,
                    now,
                };
                let batch = store.message_claim(p).await.expect("claim");
                if batch.is_empty() {
                    idle += 1;
                    assert!(idle < 100_000, "claimers starved");
                    tokio::task::yield_now().await;
                    continue;
                }
                {
                    let mut l = ledger.lock().unwrap();
                    for c in &batch {
                        let (g, _, _) = parse(&c.payload);
                        if let Some(other) = l.in_flight.insert(g.clone(), c.message_id.clone()) {
                            panic!(
                                "group {g}: {} handed out while {other} is in flight",
                                c.message_id
                            );
                        }
                    }
                }
                for c in batch {
                    settle(&*store, &q, &ledger, c, now).await;
                }
            }
        });
    }
    set.join_all().await;
    Arc::try_unwrap(ledger)
        .ok()
        .expect("claimers done")
        .into_inner()
        .unwrap()
}

/// Acks or (30 %) nacks one claimed message, recording it in the ledger
/// before the call.
async fn settle(
    store: &dyn Store,
    q: &onceq_store::QueueRef,
    ledger: &Mutex<Ledger>,
    c: ClaimedMessage,
    now: jiff::Timestamp,
) {
    let (g, i, p) = parse(&c.payload);
    let nack = rand::random::<u8>() % 10 < 3;
    {
        let mut l = ledger.lock().unwrap();
        assert_eq!(l.in_flight.remove(&g), Some(c.message_id.clone()));
        if nack {
            l.nacks += 1;
        } else {
            l.acks += 1;
            l.acked.entry(g).or_default().push(p * 1000 + i);
        }
    }
    let lease = LeaseRef {
        queue: q.clone(),
        message_id: c.message_id,
        receipt: Some(c.receipt),
    };
    if nack {
        let out = store
            .message_nack(MessageNack {
                lease,
                requeue: true,
                delay: jiff::SignedDuration::ZERO,
                by_backoff: false,
                error: None,
                by: onceq_store::NackBy::Consumer,
                now,
            })
            .await
            .expect("nack");
        assert!(out.requeued, "nack requeued: {out:?}");
    } else {
        let acked = store
            .message_ack(MessageAck {
                lease,
                result: None,
                now,
            })
            .await
            .expect("ack")
            .acked;
        assert!(acked, "ack of a held message");
    }
}

/// A FIFO queue that never dead-letters in these tests.
async fn patient_fifo_queue(h: &Harness, name: &str) {
    let settings = QueueSettings {
        max_retries: 1000,
        ..fifo()
    };
    h.create(name, settings).await.unwrap();
}

/// 5 groups × 40 messages, published interleaved in batches of 10, then
/// drained by 8 claimers over `stores`; every group acked exactly in
/// publish order.
async fn drain_in_order(h: &Harness, stores: &[Arc<dyn Store>]) {
    const PER_GROUP: usize = 40;
    patient_fifo_queue(h, "orders").await;
    let all: Vec<NewMessage> = (0..PER_GROUP)
        .flat_map(|i| (0..GROUPS).map(move |g| gm(&format!("g{g}"), i)))
        .collect();
    for batch in all.chunks(10) {
        h.publish("orders", batch.to_vec()).await.unwrap();
    }
    let ledger = run_claimers(h, stores, "orders", GROUPS * PER_GROUP).await;
    assert!(ledger.nacks > 0, "some nacks happened");
    for g in 0..GROUPS {
        let acked = &ledger.acked[&format!("g{g}")];
        let want: Vec<usize> = (0..PER_GROUP).collect();
        assert_eq!(acked, &want, "group g{g} acked in publish order");
    }
    let s = h.stats("orders").await;
    assert_eq!((s.message_count, s.dead_lettered), (0, 0));
}

async fn fifo_order_with_8_concurrent_claimers_and_random_nacks(h: Harness) {
    drain_in_order(&h, std::slice::from_ref(&h.store)).await;
}

/// Two publishers per group publish one message at a time while 8 claimers
/// drain: each publisher's messages are acked in its order, and a group
/// never has two messages in flight, however the publishes of one group
/// interleave.
async fn concurrent_publish_and_drain(h: &Harness, stores: &[Arc<dyn Store>]) {
    const PUBLISHERS: usize = 2;
    const EACH: usize = 20;
    patient_fifo_queue(h, "orders").await;
    let mut publishers = JoinSet::new();
    for g in 0..GROUPS {
        for p in 0..PUBLISHERS {
            let store = stores[(g + p) % stores.len()].clone();
            let (q, now, window) = (h.q("orders"), h.now, h.dedupe_window);
            publishers.spawn(async move {
                for i in 0..EACH {
                    let payload = format!(r#"{{"g":"g{g}","i":{i},"p":{p}}}"#);
                    let m = msg(&payload).group(&format!("g{g}"));
                    store
                        .message_publish(MessagePublish {
                            queue: q.clone(),
                            messages: vec![m],
                            dedupe_window: window,
                            new_queue_completed_retention: 0,
                            now,
                        })
                        .await
                        .expect("publish");
                }
            });
        }
    }
    let ledger = run_claimers(h, stores, "orders", GROUPS * PUBLISHERS * EACH).await;
    publishers.join_all().await;
    for g in 0..GROUPS {
        let acked = &ledger.acked[&format!("g{g}")];
        assert_eq!(acked.len(), PUBLISHERS * EACH);
        for p in 0..PUBLISHERS {
            let mine: Vec<usize> = acked
                .iter()
                .filter(|&&x| x / 1000 == p)
                .map(|&x| x % 1000)
                .collect();
            let want: Vec<usize> = (0..EACH).collect();
            assert_eq!(mine, want, "group g{g}, publisher {p}: acked in its order");
        }
    }
    assert_eq!(h.stats("orders").await.message_count, 0);
}

async fn fifo_order_with_concurrent_publishers_and_claimers(h: Harness) {
    concurrent_publish_and_drain(&h, std::slice::from_ref(&h.store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_two_servers_fifo_order_with_random_nacks() {
    let (h, stores) = two_servers().await;
    drain_in_order(&h, &stores).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_two_servers_fifo_concurrent_publishers_and_claimers() {
    let (h, stores) = two_servers().await;
    concurrent_publish_and_drain(&h, &stores).await;
}
