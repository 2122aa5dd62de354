//! A published message handed straight to a waiting consumer
//! (`NewMessage::hand_out`): stored in flight under a lease where a claim
//! would hand it out at once, and only there; handed back when its consumer
//! went away.

use jiff::SignedDuration;
use onceq_store::{
    FinishedState, HandOut, LeaseRef, MessageAck, MessagePublish, NewMessage, PublishOutcome,
    PublishedAcking, StoreError,
};
use onceq_types::queue::QueueSettings;
use onceq_types::{MessageStatus, QueueType};

use crate::{Harness, MsgExt, defaults, msg, payload};

conformance!(
    a_hand_out_is_stored_in_flight_under_its_lease,
    a_hand_out_takes_the_queue_default_lease,
    only_what_a_claim_would_hand_out_at_once_is_handed_out,
    a_replay_is_not_handed_out,
    nothing_is_handed_out_past_what_a_claim_would_take_first,
    a_kept_queue_hands_out_kept_receipts,
    a_hand_back_makes_it_available_uncounted,
    a_publish_carries_acks_in_its_transaction,
    carried_acks_keep_what_the_queue_retains,
    a_refused_publish_leaves_no_carried_ack_half_done,
);

/// `m`, to be handed out with a lease of `secs` (or the queue's default).
fn handed(m: NewMessage, secs: Option<i64>) -> NewMessage {
    NewMessage {
        hand_out: Some(HandOut {
            visibility_timeout: secs.map(SignedDuration::from_secs),
        }),
        ..m
    }
}

impl Harness {
    /// Publishes `messages` carrying `acks` (id, receipt, result).
    async fn publish_acking(
        &self,
        queue: &str,
        messages: Vec<NewMessage>,
        acks: &[(&str, &str, Option<&str>)],
    ) -> PublishedAcking {
        let acks = acks
            .iter()
            .map(|(id, receipt, result)| MessageAck {
                lease: self.lease(queue, id, Some(receipt)),
                result: result.map(str::to_owned),
                now: self.now,
            })
            .collect();
        let p = MessagePublish {
            queue: self.q(queue),
            messages,
            dedupe_window: self.dedupe_window,
            new_queue_completed_retention: 0,
            now: self.now,
        };
        self.store.message_publish_acking(p, acks).await
    }

    async fn hand_back(&self, queue: &str, id: &str, receipt: &str) -> bool {
        self.store
            .message_hand_back(LeaseRef {
                queue: self.q(queue),
                message_id: id.to_owned(),
                receipt: Some(receipt.to_owned()),
            })
            .await
            .expect("message_hand_back")
    }
}

/// The lease `o` was handed out under; panics if it was not.
fn lease(o: &PublishOutcome) -> (String, jiff::Timestamp) {
    let h = o.handed_out.clone().expect("handed out");
    (h.receipt, h.lease_expires_at)
}

async fn a_hand_out_is_stored_in_flight_under_its_lease(h: Harness) {
    h.create("jobs", defaults()).await.unwrap();
    let o = h
        .publish_msg("jobs", handed(msg(&payload(1)).key("k"), Some(45)))
        .await;
    // The answer is the publish's, as the contract has it.
    assert_eq!((o.status, o.delivery_count), (MessageStatus::Available, 0));
    let (receipt, until) = lease(&o);
    assert!(receipt.starts_with("rcpt_") && !receipt.starts_with("rcpt_k"));
    assert_eq!(until, h.t(45));
    let s = h.stats("jobs").await;
    assert_eq!((s.available, s.in_flight), (0, 1));
    assert!(h.claim("jobs", 10).await.is_empty(), "already handed out");
    assert!(h.ack("jobs", &o.message_id, Some(&receipt)).await);
    assert_eq!(h.stats("jobs").await.message_count, 0);
}

async fn a_hand_out_takes_the_queue_default_lease(h: Harness) {
    let settings = QueueSettings {
        visibility_timeout_default: 90,
        ..defaults()
    };
    h.create("jobs", settings).await.unwrap();
    let o = h.publish_msg("jobs", handed(msg(&payload(1)), None)).await;
    assert_eq!(lease(&o).1, h.t(90));
}

async fn only_what_a_claim_would_hand_out_at_once_is_handed_out(h: Harness) {
    let cases = [
        (
            "fifo",
            QueueSettings {
                queue_type: QueueType::Fifo,
                ..defaults()
            },
        ),
        (
            "capped",
            QueueSettings {
                max_in_flight: Some(5),
                ..defaults()
            },
        ),
        (
            "paced",
            QueueSettings {
                rate_per_sec: Some(100.0),
                ..defaults()
            },
        ),
        ("paused", defaults()),
    ];
    for (name, settings) in cases {
        h.create(name, settings).await.unwrap();
    }
    h.pause("paused", true).await.unwrap();
    for (name, _) in [("fifo", ()), ("capped", ()), ("paced", ()), ("paused", ())] {
        let o = h.publish_msg(name, handed(msg(&payload(1)), None)).await;
        assert_eq!(o.handed_out, None, "{name}");
        let s = h.stats(name).await;
        assert_eq!((s.available, s.in_flight), (1, 0), "{name}");
    }
    h.create("jobs", defaults()).await.unwrap();
    let o = h
        .publish_msg("jobs", handed(msg(&payload(1)).delay(10), None))
        .await;
    assert_eq!((o.handed_out, o.status), (None, MessageStatus::Delayed));
    // Beside it in one publish, one that may go is handed out alone.
    let out = h
        .publish(
            "jobs",
            vec![
                handed(msg(&payload(2)).delay(10), None),
                handed(msg(&payload(3)), None),
            ],
        )
        .await
        .unwrap();
    assert_eq!(out[0].handed_out, None);
    assert!(out[1].handed_out.is_some());
    let s = h.stats("jobs").await;
    assert_eq!((s.delayed, s.in_flight), (2, 1));
}

async fn a_replay_is_not_handed_out(h: Harness) {
    h.create("jobs", defaults()).await.unwrap();
    let first = h.publish_msg("jobs", msg(&payload(1)).key("k")).await;
    let again = h
        .publish_msg("jobs", handed(msg(&payload(1)).key("k"), None))
        .await;
    assert!(again.replay && again.handed_out.is_none());
    assert_eq!(again.message_id, first.message_id);
    // Claimed, so that nothing waits ahead of what follows.
    assert_eq!(h.claim_one("jobs").await.message_id, first.message_id);
    // The same key twice in one publish: its first message only.
    let out = h
        .publish(
            "jobs",
            vec![
                handed(msg(&payload(2)).key("k2"), None),
                handed(msg(&payload(2)).key("k2"), None),
            ],
        )
        .await
        .unwrap();
    assert!(out[0].handed_out.is_some());
    assert!(out[1].replay && out[1].handed_out.is_none());
    let s = h.stats("jobs").await;
    assert_eq!((s.available, s.in_flight), (0, 2));
}

/// A claim hands out the highest priority first, then the oldest, and
/// promotes delayed messages whose time has come before it looks: a new
/// message handed out past one of those would leave it waiting for as
/// long as publishes keep finding consumers waiting (they never claim).
/// So such a publish stores its message available and the consumer
/// claims instead (`rules::hand_out::Ahead`).
async fn nothing_is_handed_out_past_what_a_claim_would_take_first(mut h: Harness) {
    let waiting = h.publish_one("jobs", &payload(1)).await;
    let o = h.publish_msg("jobs", handed(msg(&payload(2)), None)).await;
    assert_eq!(o.handed_out, None, "an older message is available");
    let s = h.stats("jobs").await;
    assert_eq!((s.available, s.in_flight), (2, 0));
    let claimed = h.claim("jobs", 1).await;
    assert_eq!(claimed[0].message_id, waiting.message_id, "oldest first");
    h.claim_one("jobs").await;
    let o = h.publish_msg("jobs", handed(msg(&payload(3)), None)).await;
    assert!(o.handed_out.is_some(), "nothing available: handed out");

    // A delayed message: in the way only once its time has come.
    let later = h.publish_msg("jobs", msg(&payload(4)).delay(10)).await;
    let o = h.publish_msg("jobs", handed(msg(&payload(5)), None)).await;
    assert!(o.handed_out.is_some(), "the delayed one is not due yet");
    h.advance(10);
    let o = h.publish_msg("jobs", handed(msg(&payload(6)), None)).await;
    assert_eq!(o.handed_out, None, "the delayed one is due");
    let claimed = h.claim("jobs", 1).await;
    assert_eq!(claimed[0].message_id, later.message_id, "promoted, older");
    h.claim_one("jobs").await;

    // With priorities: only what is available at the new one's priority
    // or above is ahead of it.
    let settings = QueueSettings {
        enable_priority: true,
        ..defaults()
    };
    h.create("ranked", settings).await.unwrap();
    h.publish_msg("ranked", msg(&payload(7)).priority(5)).await;
    let low = h
        .publish_msg("ranked", handed(msg(&payload(8)).priority(5), None))
        .await;
    assert_eq!(low.handed_out, None, "same priority, older one waits");
    let high = h
        .publish_msg("ranked", handed(msg(&payload(9)).priority(6), None))
        .await;
    assert!(high.handed_out.is_some(), "a claim would take it first");
}

async fn a_kept_queue_hands_out_kept_receipts(h: Harness) {
    let settings = QueueSettings {
        completed_retention_seconds: 60,
        ..defaults()
    };
    h.create("jobs", settings).await.unwrap();
    let o = h.publish_msg("jobs", handed(msg(&payload(1)), None)).await;
    let (receipt, _) = lease(&o);
    assert!(receipt.starts_with("rcpt_k"), "{receipt}");
    assert!(h.ack("jobs", &o.message_id, Some(&receipt)).await);
}

async fn a_hand_back_makes_it_available_uncounted(h: Harness) {
    h.create("jobs", defaults()).await.unwrap();
    let o = h.publish_msg("jobs", handed(msg(&payload(1)), None)).await;
    let (receipt, _) = lease(&o);
    assert!(
        !h.hand_back("jobs", &o.message_id, "rcpt_0").await,
        "another lease"
    );
    assert!(h.hand_back("jobs", &o.message_id, &receipt).await);
    assert!(!h.hand_back("jobs", &o.message_id, &receipt).await, "once");
    let s = h.stats("jobs").await;
    assert_eq!((s.available, s.in_flight), (1, 0));
    let got = h.claim_one("jobs").await;
    assert_eq!(got.message_id, o.message_id);
    assert_eq!(got.delivery_count, 1, "the hand-out was never a delivery");
    assert!(
        !h.ack("jobs", &o.message_id, Some(&receipt)).await,
        "its lease ended"
    );
}

async fn a_publish_carries_acks_in_its_transaction(h: Harness) {
    h.create("jobs", defaults()).await.unwrap();
    h.publish_one("jobs", &payload(1)).await;
    h.publish_one("jobs", &payload(2)).await;
    let got = h.claim("jobs", 2).await;
    let (a, b) = (&got[0], &got[1]);
    let done = h
        .publish_acking(
            "jobs",
            vec![handed(msg(&payload(3)), None)],
            &[
                (&a.message_id, &a.receipt, None),
                (&b.message_id, "rcpt_0", None),
                (&a.message_id, &a.receipt, None),
            ],
        )
        .await;
    let out = done.published.expect("published");
    assert!(out[0].handed_out.is_some());
    let acked: Vec<bool> = done.acked.expect("done").iter().map(|o| o.acked).collect();
    assert_eq!(
        acked,
        [true, false, false],
        "each answered as alone, in order"
    );
    // `a` gone; `b` (wrong receipt) and the new message held.
    let s = h.stats("jobs").await;
    assert_eq!((s.message_count, s.in_flight), (2, 2));
    assert!(h.ack("jobs", &b.message_id, Some(&b.receipt)).await);
}

async fn carried_acks_keep_what_the_queue_retains(h: Harness) {
    let settings = QueueSettings {
        completed_retention_seconds: 60,
        ..defaults()
    };
    h.create("jobs", settings).await.unwrap();
    let p = h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    let done = h
        .publish_acking(
            "jobs",
            vec![handed(msg(&payload(2)), None)],
            &[(&c.message_id, &c.receipt, Some(r#"{"rows":3}"#))],
        )
        .await;
    done.published.expect("published");
    let acked = done.acked.expect("done");
    assert!(acked[0].acked);
    assert_eq!(acked[0].consumed_at, Some(h.t(0)));
    let found = h.find("jobs", &p.message_id).await.unwrap().unwrap();
    let finished = found.finished.expect("kept");
    assert_eq!(finished.state, FinishedState::Completed);
    assert_eq!(finished.result.as_deref(), Some(r#"{"rows":3}"#));
}

/// A publish refused for its own reason (its key held with another
/// payload) stores nothing, and its acks are either done and said so, or
/// not done at all: never done and said not to be.
async fn a_refused_publish_leaves_no_carried_ack_half_done(h: Harness) {
    h.create("jobs", defaults()).await.unwrap();
    h.publish_msg("jobs", msg(&payload(1)).key("k")).await;
    let c = h.claim_one("jobs").await;
    let done = h
        .publish_acking(
            "jobs",
            vec![handed(msg(&payload(2)).key("k"), None)],
            &[(&c.message_id, &c.receipt, None)],
        )
        .await;
    assert!(
        matches!(done.published, Err(StoreError::IdempotencyKeyReused { .. })),
        "{:?}",
        done.published
    );
    match done.acked {
        Some(acked) => {
            assert!(acked[0].acked);
            assert_eq!(h.stats("jobs").await.message_count, 0);
        }
        None => {
            assert_eq!(h.stats("jobs").await.in_flight, 1);
            assert!(h.ack("jobs", &c.message_id, Some(&c.receipt)).await);
        }
    }
    assert_eq!(h.stats("jobs").await.message_count, 0, "nothing stored");
}
