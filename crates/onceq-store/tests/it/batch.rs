//! The batch forms: `message_ack_many`, `message_nack_many`,
//! `message_cancel_many`, `message_delete_many`, `dlq_redrive_many`. Each
//! answers entry by entry, in order, as the single form would answer the
//! entry alone; an id named twice is done once; a batch of none (or too
//! many) is refused. And `message_ack_many_then_claim`, a consume's acks
//! and its claim in one transaction.

use jiff::SignedDuration;
use onceq_store::{
    AckOutcome, FinishedState, MAX_BATCH, MessageAck, MessageClaim, MessageIds, MessageNack,
    NackBy, NackOutcome, SingleOutcome, StoreError,
};
use onceq_types::queue::QueueSettings;

use crate::{Harness, defaults, fifo, payload, payloads};

conformance!(
    ack_many_answers_each_entry,
    ack_many_keeps_each_result_while_the_queue_retains,
    nack_many_answers_each_entry,
    cancel_many_answers_each_id,
    delete_many_leaves_in_flight_messages_with_their_holder,
    redrive_many_moves_the_named_dead_letters,
    redrive_many_into_fifo_appends_in_the_order_given,
    batches_of_none_or_too_many_are_refused,
    ack_many_then_claim_answers_each_ack_and_claims,
    ack_many_then_claim_frees_in_flight_places_for_its_claim,
    ack_many_then_claim_refuses_acks_of_another_queue,
);

const UNKNOWN: &str = "qmsg_00000000000000000000000000000000";

impl Harness {
    fn ack_entry(&self, queue: &str, id: &str, receipt: Option<&str>) -> MessageAck {
        MessageAck {
            lease: self.lease(queue, id, receipt),
            result: None,
            now: self.now,
        }
    }

    fn nack_entry(&self, queue: &str, id: &str, receipt: &str, requeue: bool) -> MessageNack {
        MessageNack {
            lease: self.lease(queue, id, Some(receipt)),
            requeue,
            delay: SignedDuration::ZERO,
            by_backoff: false,
            error: Some("boom".into()),
            by: NackBy::Consumer,
            now: self.now,
        }
    }

    fn ids(&self, queue: &str, ids: &[&str]) -> MessageIds {
        MessageIds {
            queue: self.q(queue),
            message_ids: ids.iter().map(|id| (*id).to_owned()).collect(),
            now: self.now,
        }
    }

    /// `n` messages published to `queue` and dead-lettered, their ids.
    async fn dead_letters(&self, queue: &str, n: i64) -> Vec<String> {
        let mut ids = Vec::new();
        for i in 0..n {
            ids.push(self.publish_one(queue, &payload(i)).await.message_id);
            let c = self.claim_one(queue).await;
            assert!(self.nack_claimed(queue, &c, false).await.dead_lettered);
        }
        ids
    }
}

impl Harness {
    fn claim_of(&self, queue: &str, max: u32) -> MessageClaim {
        MessageClaim {
            queue: self.q(queue),
            max,
            visibility_timeout: None,
            now: self.now,
        }
    }
}

fn acked(outcomes: &[AckOutcome]) -> Vec<bool> {
    outcomes.iter().map(|o| o.acked).collect()
}

async fn ack_many_answers_each_entry(h: Harness) {
    for i in 0..3 {
        h.publish_one("jobs", &payload(i)).await;
    }
    let c = h.claim("jobs", 3).await;
    let acks = vec![
        h.ack_entry("jobs", &c[0].message_id, Some(&c[0].receipt)),
        h.ack_entry("jobs", &c[1].message_id, Some("rcpt_not_this_one")),
        h.ack_entry("jobs", &c[2].message_id, None),
        h.ack_entry("jobs", &c[0].message_id, Some(&c[0].receipt)),
        h.ack_entry("jobs", UNKNOWN, None),
        h.ack_entry("nope", &c[1].message_id, None),
    ];
    let out = h.store.message_ack_many(acks).await.unwrap();
    assert_eq!(acked(&out), [true, false, true, false, false, false]);
    assert_eq!(out[0].consumed_at, Some(h.now), "as a single ack answers");
    let s = h.stats("jobs").await;
    assert_eq!(
        (s.message_count, s.in_flight),
        (1, 1),
        "the wrong receipt's message is still held"
    );
    assert!(h.ack("jobs", &c[1].message_id, Some(&c[1].receipt)).await);
}

async fn ack_many_keeps_each_result_while_the_queue_retains(h: Harness) {
    let keeping = QueueSettings {
        completed_retention_seconds: 60,
        ..QueueSettings::default()
    };
    h.create("jobs", keeping).await.unwrap();
    for i in 0..2 {
        h.publish_one("jobs", &payload(i)).await;
    }
    let c = h.claim("jobs", 2).await;
    let acks = c
        .iter()
        .enumerate()
        .map(|(i, c)| MessageAck {
            result: Some(format!(r#"{{"n":{i}}}"#)),
            ..h.ack_entry("jobs", &c.message_id, Some(&c.receipt))
        })
        .collect();
    let out = h.store.message_ack_many(acks).await.unwrap();
    assert_eq!(acked(&out), [true, true]);
    for (i, c) in c.iter().enumerate() {
        let found = h.find("jobs", &c.message_id).await.unwrap().unwrap();
        let finished = found.finished.expect("kept");
        assert_eq!(finished.state, FinishedState::Completed);
        assert_eq!(finished.result, Some(format!(r#"{{"n":{i}}}"#)));
    }
    assert_eq!(h.stats("jobs").await.message_count, 0);
}

async fn nack_many_answers_each_entry(h: Harness) {
    for i in 0..3 {
        h.publish_one("jobs", &payload(i)).await;
    }
    let c = h.claim("jobs", 3).await;
    let nacks = vec![
        h.nack_entry("jobs", &c[0].message_id, &c[0].receipt, true),
        h.nack_entry("jobs", &c[1].message_id, &c[1].receipt, false),
        h.nack_entry("jobs", &c[2].message_id, "rcpt_not_this_one", true),
        h.nack_entry("jobs", &c[0].message_id, &c[0].receipt, true),
    ];
    let out = h.store.message_nack_many(nacks).await.unwrap();
    let outcome = |nacked, requeued, dead_lettered| NackOutcome {
        nacked,
        requeued,
        dead_lettered,
        delivery_count: 1,
    };
    assert_eq!(
        out,
        [
            outcome(true, true, false),
            outcome(true, false, true),
            outcome(false, false, false),
            // Requeued by the first entry: no longer held.
            outcome(false, false, false),
        ]
    );
    let s = h.stats("jobs").await;
    assert_eq!(
        (s.available, s.in_flight, s.dead_lettered),
        (1, 1, 1),
        "one requeued, one kept by its holder, one dead-lettered"
    );
    let found = h.find("jobs", &c[1].message_id).await.unwrap().unwrap();
    assert!(found.dead_lettered);
    assert_eq!(found.record.last_error.as_deref(), Some("boom"));
}

async fn cancel_many_answers_each_id(h: Harness) {
    let a = h.publish_one("jobs", &payload(1)).await.message_id;
    let b = h.publish_one("jobs", &payload(2)).await.message_id;
    let kept = h.publish_one("jobs", &payload(3)).await.message_id;
    let held = h.claim_one("jobs").await;
    assert_eq!(held.message_id, a);
    let out = h
        .store
        .message_cancel_many(h.ids("jobs", &[&a, &b, UNKNOWN, &a]))
        .await
        .unwrap();
    use SingleOutcome::*;
    assert_eq!(out, [Done, Done, NotFound, NotFound]);
    assert!(
        !h.ack("jobs", &a, Some(&held.receipt)).await,
        "a cancelled lease is over"
    );
    let s = h.stats("jobs").await;
    assert_eq!((s.message_count, s.in_flight), (1, 0));
    assert_eq!(h.claim_one("jobs").await.message_id, kept);
    let res = h.store.message_cancel_many(h.ids("nope", &[&b])).await;
    assert!(matches!(res, Err(StoreError::QueueNotFound)), "got {res:?}");
}

async fn delete_many_leaves_in_flight_messages_with_their_holder(h: Harness) {
    let a = h.publish_one("jobs", &payload(1)).await.message_id;
    let b = h.publish_one("jobs", &payload(2)).await.message_id;
    let held = h.claim_one("jobs").await;
    assert_eq!(held.message_id, a);
    let out = h
        .store
        .message_delete_many(h.ids("jobs", &[&a, &b, UNKNOWN, &b]))
        .await
        .unwrap();
    use SingleOutcome::*;
    assert_eq!(out, [InFlight, Done, NotFound, NotFound]);
    let s = h.stats("jobs").await;
    assert_eq!((s.message_count, s.in_flight), (1, 1));
    assert!(h.ack("jobs", &a, Some(&held.receipt)).await, "still held");
    let res = h.store.message_delete_many(h.ids("nope", &[&b])).await;
    assert!(matches!(res, Err(StoreError::QueueNotFound)), "got {res:?}");
}

async fn redrive_many_moves_the_named_dead_letters(h: Harness) {
    let dead = h.dead_letters("jobs", 3).await;
    let held = h.claim_one("jobs-dlq").await;
    assert_eq!(held.message_id, dead[0]);
    let out = h
        .store
        .dlq_redrive_many(h.ids("jobs", &[&dead[0], &dead[1], UNKNOWN, &dead[1]]))
        .await
        .unwrap();
    use SingleOutcome::*;
    assert_eq!(out.dead_letter_queue, "jobs-dlq");
    assert_eq!(out.outcomes, [InFlight, Done, NotFound, NotFound]);
    let s = h.stats("jobs").await;
    assert_eq!((s.available, s.dead_lettered), (1, 2));
    let back = h.claim_one("jobs").await;
    assert_eq!(
        (back.message_id.as_str(), back.delivery_count),
        (dead[1].as_str(), 1),
        "moved back with its count reset"
    );
    let res = h
        .store
        .dlq_redrive_many(h.ids("jobs-dlq", &[&dead[2]]))
        .await;
    assert!(
        matches!(res, Err(StoreError::Invalid(_))),
        "no DLQ: {res:?}"
    );
}

async fn redrive_many_into_fifo_appends_in_the_order_given(h: Harness) {
    h.create("orders", fifo()).await.unwrap();
    let dead = h.dead_letters("orders", 2).await;
    let waiting = h.publish_one("orders", &payload(9)).await.message_id;
    let out = h
        .store
        .dlq_redrive_many(h.ids("orders", &[&dead[1], &dead[0]]))
        .await
        .unwrap();
    assert_eq!(out.outcomes, [SingleOutcome::Done, SingleOutcome::Done]);
    // One group: the message waiting first, then the redriven ones at the
    // group's tail in the order given, one at a time.
    for want in [&waiting, &dead[1], &dead[0]] {
        let c = h.claim("orders", 10).await;
        assert_eq!(c.len(), 1, "one in flight per group");
        assert_eq!(&c[0].message_id, want);
        assert!(h.ack("orders", &c[0].message_id, Some(&c[0].receipt)).await);
    }
}

async fn batches_of_none_or_too_many_are_refused(h: Harness) {
    h.create("jobs", defaults()).await.unwrap();
    let none = h.store.message_ack_many(Vec::new()).await;
    assert!(matches!(none, Err(StoreError::Invalid(_))), "got {none:?}");
    let none = h.store.message_nack_many(Vec::new()).await;
    assert!(matches!(none, Err(StoreError::Invalid(_))), "got {none:?}");
    for res in [
        h.store.message_cancel_many(h.ids("jobs", &[])).await,
        h.store.message_delete_many(h.ids("jobs", &[])).await,
    ] {
        assert!(matches!(res, Err(StoreError::Invalid(_))), "got {res:?}");
    }
    let many: Vec<String> = (0..=MAX_BATCH).map(|i| format!("qmsg_{i:032}")).collect();
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    let res = h.store.message_delete_many(h.ids("jobs", &refs)).await;
    assert!(matches!(res, Err(StoreError::Invalid(_))), "got {res:?}");
    let acks = many
        .iter()
        .map(|id| h.ack_entry("jobs", id, None))
        .collect();
    let res = h.store.message_ack_many(acks).await;
    assert!(matches!(res, Err(StoreError::Invalid(_))), "got {res:?}");
}

async fn ack_many_then_claim_answers_each_ack_and_claims(h: Harness) {
    for i in 0..5 {
        h.publish_one("jobs", &payload(i)).await;
    }
    let c = h.claim("jobs", 3).await;
    // An ack without a receipt may keep its message (`rules::finished`):
    // on PostgreSQL another statement than those with one, and the
    // answers still come back in the order given.
    let acks = vec![
        h.ack_entry("jobs", &c[0].message_id, Some(&c[0].receipt)),
        h.ack_entry("jobs", &c[2].message_id, None),
        h.ack_entry("jobs", &c[1].message_id, Some("rcpt_not_this_one")),
        h.ack_entry("jobs", UNKNOWN, None),
    ];
    let (out, claimed) = h
        .store
        .message_ack_many_then_claim(acks, h.claim_of("jobs", 10))
        .await
        .unwrap();
    assert_eq!(acked(&out), [true, true, false, false]);
    assert_eq!(out[0].consumed_at, Some(h.now), "as a single ack answers");
    assert_eq!(
        payloads(&claimed),
        [payload(3), payload(4)],
        "the rest, in order"
    );
    let s = h.stats("jobs").await;
    assert_eq!(
        (s.message_count, s.in_flight),
        (3, 3),
        "the wrong receipt's message is still held, the claimed two are"
    );
}

/// The claim runs after the acks in their transaction: under an in-flight
/// limit it sees them gone. (Claimed before they commit, it would find the
/// queue full.)
async fn ack_many_then_claim_frees_in_flight_places_for_its_claim(h: Harness) {
    let limited = QueueSettings {
        max_in_flight: Some(2),
        ..defaults()
    };
    h.create("jobs", limited).await.unwrap();
    for i in 0..4 {
        h.publish_one("jobs", &payload(i)).await;
    }
    let c = h.claim("jobs", 10).await;
    assert_eq!(c.len(), 2, "the limit");
    let acks = c
        .iter()
        .map(|m| h.ack_entry("jobs", &m.message_id, Some(&m.receipt)))
        .collect();
    let (out, claimed) = h
        .store
        .message_ack_many_then_claim(acks, h.claim_of("jobs", 10))
        .await
        .unwrap();
    assert_eq!(acked(&out), [true, true]);
    assert_eq!(payloads(&claimed), [payload(2), payload(3)]);
}

/// The acks are the claim's queue's: others, or none, are refused before
/// anything is done; a queue that is not there is `QueueNotFound`.
async fn ack_many_then_claim_refuses_acks_of_another_queue(h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    h.publish_one("other", &payload(2)).await;
    let c = h.claim_one("jobs").await;
    let acks = || vec![h.ack_entry("jobs", &c.message_id, Some(&c.receipt))];
    for (acks, claim) in [(acks(), "other"), (acks(), "nope"), (Vec::new(), "jobs")] {
        let err = h
            .store
            .message_ack_many_then_claim(acks, h.claim_of(claim, 10))
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{claim}: {err:?}");
    }
    let s = h.stats("jobs").await;
    assert_eq!((s.message_count, s.in_flight), (1, 1), "still held");
    assert_eq!(h.stats("other").await.in_flight, 0, "nothing claimed");
    let gone = vec![h.ack_entry("nope", &c.message_id, Some(&c.receipt))];
    let err = h
        .store
        .message_ack_many_then_claim(gone, h.claim_of("nope", 10))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::QueueNotFound), "{err:?}");
    assert!(h.ack("jobs", &c.message_id, Some(&c.receipt)).await);
}
