//! A queue's retry backoff: stored by create and update (replaced whole,
//! removed by `Some(None)`), and applied to a nack that asks for it, to an
//! expired lease (PostgreSQL decides that one in SQL) and never to a nack
//! with a delay of its own. Time is the harness's: delays are checked to
//! the millisecond, jitter by its bounds.

use jiff::{SignedDuration, Timestamp};
use onceq_store::{
    ClaimedMessage, MessageGet, MessageNack, NackOutcome, QueueChanges, QueueUpdate, StoreError,
};
use onceq_types::{MessageStatus, QueueRecord, RetryBackoff, queue::QueueSettings};

use crate::{Harness, defaults, payload};

conformance!(
    backoff_is_stored_by_create_and_update,
    backoff_delays_a_nack_without_a_delay_of_its_own,
    backoff_delays_an_expired_lease_by_its_delivery_count,
    backoff_jitter_stays_within_its_bounds,
    no_backoff_requeues_at_once,
);

fn backoff(initial: i32, multiplier: f64, max: i32, jitter: f64) -> RetryBackoff {
    RetryBackoff {
        initial_seconds: initial,
        multiplier,
        max_seconds: max,
        jitter,
    }
}

fn with_backoff(b: RetryBackoff) -> QueueSettings {
    QueueSettings {
        retry_backoff: Some(b),
        max_retries: 1000,
        ..defaults()
    }
}

impl Harness {
    async fn set_backoff(&self, name: &str, b: Option<Option<RetryBackoff>>) -> QueueRecord {
        self.store
            .queue_update(QueueUpdate {
                queue: self.q(name),
                changes: QueueChanges {
                    retry_backoff: b,
                    ..QueueChanges::default()
                },
                now: self.now,
            })
            .await
            .expect("queue_update")
    }

    /// Nacks with requeue and no delay of its own.
    async fn nack_by_backoff(&self, queue: &str, c: &ClaimedMessage) -> NackOutcome {
        self.store
            .message_nack(MessageNack {
                lease: self.lease(queue, &c.message_id, Some(&c.receipt)),
                requeue: true,
                delay: SignedDuration::ZERO,
                by_backoff: true,
                error: None,
                by: onceq_store::NackBy::Consumer,
                now: self.now,
            })
            .await
            .expect("nack")
    }

    /// The message's state and when it is visible.
    async fn visibility(&self, queue: &str, id: &str) -> (MessageStatus, Timestamp) {
        let m = self
            .store
            .message_get(MessageGet {
                queue: self.q(queue),
                message_id: id.to_owned(),
                now: self.now,
            })
            .await
            .unwrap()
            .expect("message held");
        (m.status, m.visible_at)
    }
}

async fn backoff_is_stored_by_create_and_update(h: Harness) {
    let b = backoff(2, 1.5, 600, 0.25);
    let created = h.create("jobs", with_backoff(b)).await.unwrap();
    assert_eq!(created.record.retry_backoff, Some(b));
    assert_eq!(h.get("jobs").await.unwrap().retry_backoff, Some(b));
    // The same settings answer the queue; another backoff is a conflict.
    assert!(!h.create("jobs", with_backoff(b)).await.unwrap().created);
    let other = with_backoff(backoff(3, 1.5, 600, 0.25));
    assert!(matches!(
        h.create("jobs", other).await,
        Err(StoreError::QueueAlreadyExists(_))
    ));
    assert_eq!(h.get("jobs-dlq").await.unwrap().retry_backoff, None);

    let kept = h.set_backoff("jobs", None).await;
    assert_eq!(kept.retry_backoff, Some(b), "left out: kept");
    let c = backoff(10, 2.0, 60, 0.0);
    assert_eq!(
        h.set_backoff("jobs", Some(Some(c))).await.retry_backoff,
        Some(c)
    );
    let cleared = h.set_backoff("jobs", Some(None)).await;
    assert_eq!(cleared.retry_backoff, None, "null: removed");
    let listed = h.store.queue_list(&h.q("jobs").project).await.unwrap();
    assert!(listed.iter().all(|q| q.retry_backoff.is_none()));
}

async fn backoff_delays_a_nack_without_a_delay_of_its_own(mut h: Harness) {
    h.create("jobs", with_backoff(backoff(10, 3.0, 60, 0.0)))
        .await
        .unwrap();
    let id = h.publish_one("jobs", &payload(1)).await.message_id;
    // Hand-outs 1, 2, 3, 4 fail: 10 s, 30 s, then the 60 s cap twice.
    for wait in [10, 30, 60, 60] {
        let c = h.claim_one("jobs").await;
        assert!(h.nack_by_backoff("jobs", &c).await.requeued);
        assert_eq!(
            h.visibility("jobs", &id).await,
            (
                MessageStatus::Delayed,
                h.now + SignedDuration::from_secs(wait)
            ),
            "after hand-out {}",
            c.delivery_count
        );
        h.advance(wait - 1);
        assert!(h.claim("jobs", 1).await.is_empty(), "not before its time");
        h.advance(1);
    }
    // A nack with a delay of its own keeps it, even with a backoff set.
    let c = h.claim_one("jobs").await;
    h.nack("jobs", &c.message_id, Some(&c.receipt), true, 5)
        .await;
    assert_eq!(
        h.visibility("jobs", &id).await.1,
        h.now + SignedDuration::from_secs(5)
    );
    h.advance(5);
    let c = h.claim_one("jobs").await;
    h.nack("jobs", &c.message_id, Some(&c.receipt), true, 0)
        .await;
    assert_eq!(h.claim("jobs", 1).await.len(), 1, "delay 0 given: at once");
}

async fn backoff_delays_an_expired_lease_by_its_delivery_count(mut h: Harness) {
    let b = backoff(1, 2.0, 100, 0.0);
    h.create(
        "jobs",
        QueueSettings {
            max_retries: 12,
            ..with_backoff(b)
        },
    )
    .await
    .unwrap();
    let id = h.publish_one("jobs", &payload(1)).await.message_id;
    // 1, 2, 4, … 64, then the 100 s cap: to the millisecond on both
    // backends (PostgreSQL computes it in lease_expire.sql).
    for n in 1..=9 {
        let c = h.claim_one("jobs").await;
        assert_eq!(c.delivery_count, n);
        h.advance(30); // the default lease runs out
        assert_eq!(h.lease_expire(100).await.requeued, 1);
        let want = (1i64 << (n - 1)).min(100);
        assert_eq!(
            h.visibility("jobs", &id).await,
            (
                MessageStatus::Delayed,
                h.now + SignedDuration::from_secs(want)
            ),
            "after hand-out {n}"
        );
        h.advance(want);
    }
    // The last allowed hand-out goes to the dead-letter queue, at once.
    for _ in 10..=13 {
        h.claim_one("jobs").await;
        h.advance(30);
        h.lease_expire(100).await;
        h.advance(100);
    }
    let s = h.stats("jobs").await;
    assert_eq!((s.message_count, s.dead_lettered), (0, 1));
    assert_eq!(h.claim("jobs-dlq", 1).await.len(), 1, "available there");
}

async fn backoff_jitter_stays_within_its_bounds(mut h: Harness) {
    // Half jitter on a 100 s delay: visible somewhere in [50 s, 100 s].
    h.create("jobs", with_backoff(backoff(100, 2.0, 1000, 0.5)))
        .await
        .unwrap();
    h.create("reaped", with_backoff(backoff(100, 2.0, 1000, 0.5)))
        .await
        .unwrap();
    let start = h.now;
    for n in 0..20 {
        h.publish_one("jobs", &payload(n)).await;
        h.publish_one("reaped", &payload(n)).await;
    }
    for c in h
        .claim("jobs", 10)
        .await
        .into_iter()
        .chain(h.claim("jobs", 10).await)
    {
        h.nack_by_backoff("jobs", &c).await;
    }
    let leased = h.claim("reaped", 10).await.len() + h.claim("reaped", 10).await.len();
    assert_eq!(leased, 20);
    h.advance(30);
    assert_eq!(h.lease_expire(100).await.requeued, 20);
    let reaped_at = h.now;
    let mut seen = Vec::new();
    for (queue, from) in [("jobs", start), ("reaped", reaped_at)] {
        let page = h
            .store
            .message_list(onceq_store::MessageList {
                queue: h.q(queue),
                state: None,
                search: None,
                group_id: None,
                after_seq: None,
                limit: 100,
                now: h.now,
            })
            .await
            .unwrap();
        for m in page.messages {
            let after = m.visible_at.duration_since(from).as_secs_f64();
            assert!((50.0..=100.0).contains(&after), "{queue}: {after}");
            seen.push(after);
        }
    }
    assert_eq!(seen.len(), 40);
    // 40 draws of a uniform jitter are not all one value.
    assert!(seen.iter().any(|&s| s != seen[0]), "{seen:?}");
    // The reaped ones, from their expiry: none due before 50 s, all by 100 s.
    h.advance(49);
    assert!(h.claim("reaped", 10).await.is_empty(), "none before 50 s");
    h.advance(51);
    assert_eq!(h.stats("reaped").await.available, 20, "all due by 100 s");
}

async fn no_backoff_requeues_at_once(mut h: Harness) {
    h.create("jobs", defaults()).await.unwrap();
    h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    h.nack_by_backoff("jobs", &c).await;
    let c = h.claim_one("jobs").await;
    h.advance(30);
    h.lease_expire(100).await;
    assert_eq!(h.claim("jobs", 1).await[0].message_id, c.message_id);
}
