//! A message's history (queue-api-2.md §5): every hand-out that ends is
//! recorded as an attempt, the latest error text is its `last_error`, at
//! most 20 attempts are kept, and a dead letter (and a redrive) keeps them.

use onceq_store::{DlqRedrive, NackBy};
use onceq_types::{Attempt, AttemptOutcome, queue::QueueSettings};

use crate::{Harness, payload};

conformance!(
    a_nack_records_its_error,
    a_failed_push_records_push_failed,
    lease_expiry_records_its_own_error,
    a_dead_letter_keeps_its_history_through_a_redrive,
    the_history_keeps_the_latest_twenty,
    ack_answers_when_its_lease_began,
);

impl Harness {
    /// The attempts and last error of a message of `queue` (or its DLQ).
    async fn history(&self, queue: &str, id: &str) -> (Vec<Attempt>, Option<String>) {
        let found = self.find(queue, id).await.unwrap().expect("message held");
        (found.record.attempts, found.record.last_error)
    }
}

fn attempt(
    delivery_count: i32,
    consumed_at: jiff::Timestamp,
    ended_at: jiff::Timestamp,
    outcome: AttemptOutcome,
    error: Option<&str>,
) -> Attempt {
    Attempt {
        delivery_count,
        consumed_at: Some(consumed_at),
        ended_at,
        outcome,
        error: error.map(str::to_owned),
    }
}

async fn a_nack_records_its_error(mut h: Harness) {
    let p = h.publish_one("jobs", &payload(1)).await;
    let (none, no_error) = h.history("jobs", &p.message_id).await;
    assert_eq!((none, no_error), (vec![], None), "nothing ended yet");

    let first = h.claim_one("jobs").await;
    h.advance(5);
    let out = h
        .nack_failed("jobs", &first, true, Some("disk full"), NackBy::Consumer)
        .await;
    assert!(out.requeued);
    let (attempts, last_error) = h.history("jobs", &p.message_id).await;
    let one = attempt(1, h.t(0), h.t(5), AttemptOutcome::Nacked, Some("disk full"));
    assert_eq!(attempts, vec![one.clone()]);
    assert_eq!(last_error.as_deref(), Some("disk full"));

    // A nack without an error is recorded too, and the reason last given
    // stays the last error.
    h.advance(1);
    let second = h.claim_one("jobs").await;
    h.advance(2);
    h.nack_failed("jobs", &second, true, None, NackBy::Consumer)
        .await;
    let (attempts, last_error) = h.history("jobs", &p.message_id).await;
    let two = attempt(2, h.t(6), h.t(8), AttemptOutcome::Nacked, None);
    assert_eq!(attempts, vec![one, two]);
    assert_eq!(last_error.as_deref(), Some("disk full"));
}

async fn a_failed_push_records_push_failed(h: Harness) {
    let p = h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    h.nack_failed("jobs", &c, true, Some("HTTP 503"), NackBy::Push)
        .await;
    let (attempts, last_error) = h.history("jobs", &p.message_id).await;
    assert_eq!(
        attempts,
        vec![attempt(
            1,
            h.t(0),
            h.t(0),
            AttemptOutcome::PushFailed,
            Some("HTTP 503")
        )]
    );
    assert_eq!(last_error.as_deref(), Some("HTTP 503"));
}

async fn lease_expiry_records_its_own_error(mut h: Harness) {
    let p = h.publish_one("jobs", &payload(1)).await;
    h.try_claim("jobs", 1, Some(30)).await.unwrap();
    h.advance(31);
    assert_eq!(h.lease_expire(10).await.requeued, 1);
    let text = "lease expired after 30 s without ack or extend";
    let (attempts, last_error) = h.history("jobs", &p.message_id).await;
    assert_eq!(
        attempts,
        vec![attempt(
            1,
            h.t(0),
            h.t(31),
            AttemptOutcome::LeaseExpired,
            Some(text)
        )]
    );
    assert_eq!(last_error.as_deref(), Some(text));
}

async fn a_dead_letter_keeps_its_history_through_a_redrive(mut h: Harness) {
    let settings = QueueSettings {
        max_retries: 1,
        ..QueueSettings::default()
    };
    h.create("jobs", settings).await.unwrap();
    let p = h.publish_one("jobs", &payload(1)).await;
    let first = h.claim_one("jobs").await;
    h.nack_failed(
        "jobs",
        &first,
        true,
        Some("timeout calling billing"),
        NackBy::Consumer,
    )
    .await;
    h.advance(1);
    h.try_claim("jobs", 1, Some(10)).await.unwrap();
    h.advance(10);
    // The last allowed hand-out's failure dead-letters, recorded once as
    // `dead_lettered` with the failure's own text.
    assert_eq!(h.lease_expire(10).await.dead_lettered, 1);
    let expired = "lease expired after 10 s without ack or extend";
    let want = vec![
        attempt(
            1,
            h.t(0),
            h.t(0),
            AttemptOutcome::Nacked,
            Some("timeout calling billing"),
        ),
        attempt(
            2,
            h.t(1),
            h.t(11),
            AttemptOutcome::DeadLettered,
            Some(expired),
        ),
    ];
    let found = h.find("jobs", &p.message_id).await.unwrap().unwrap();
    assert!(found.dead_lettered);
    assert_eq!(found.record.attempts, want);
    assert_eq!(found.record.last_error.as_deref(), Some(expired));

    let out = h
        .store
        .dlq_redrive(DlqRedrive {
            queue: h.q("jobs"),
            max: None,
            now: h.now,
        })
        .await
        .unwrap();
    assert_eq!(out.redriven, 1);
    let back = h.find("jobs", &p.message_id).await.unwrap().unwrap();
    assert!(!back.dead_lettered);
    assert_eq!(back.record.delivery_count, 0, "a redrive resets the count");
    assert_eq!(back.record.attempts, want, "and keeps the history");
    assert_eq!(back.record.last_error.as_deref(), Some(expired));

    // A nack that dead-letters at once is recorded as dead_lettered too.
    let c = h.claim_one("jobs").await;
    h.nack_failed("jobs", &c, false, Some("bad payload"), NackBy::Consumer)
        .await;
    let (attempts, last_error) = h.history("jobs", &p.message_id).await;
    assert_eq!(
        attempts.last(),
        Some(&attempt(
            1,
            h.now,
            h.now,
            AttemptOutcome::DeadLettered,
            Some("bad payload")
        ))
    );
    assert_eq!(attempts.len(), 3);
    assert_eq!(last_error.as_deref(), Some("bad payload"));
}

async fn the_history_keeps_the_latest_twenty(mut h: Harness) {
    let settings = QueueSettings {
        max_retries: 1000,
        ..QueueSettings::default()
    };
    h.create("jobs", settings).await.unwrap();
    let p = h.publish_one("jobs", &payload(1)).await;
    for n in 1..=25 {
        let c = h.claim_one("jobs").await;
        if n % 2 == 0 {
            let error = format!("failure {n}");
            h.nack_failed("jobs", &c, true, Some(&error), NackBy::Consumer)
                .await;
        } else {
            // Odd hand-outs expire (the lease reaper's statement keeps the
            // same bound as a nack).
            h.advance(31);
            h.lease_expire(10).await;
        }
    }
    let (attempts, last_error) = h.history("jobs", &p.message_id).await;
    let counts: Vec<i32> = attempts.iter().map(|a| a.delivery_count).collect();
    assert_eq!(counts, (6..=25).collect::<Vec<_>>());
    assert_eq!(attempts[19].outcome, AttemptOutcome::LeaseExpired);
    assert_eq!(attempts[18].error.as_deref(), Some("failure 24"));
    assert_eq!(
        last_error.as_deref(),
        Some("lease expired after 30 s without ack or extend")
    );
}

async fn ack_answers_when_its_lease_began(mut h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    h.advance(7);
    let out = h
        .ack_with("jobs", &c.message_id, Some(&c.receipt), None)
        .await;
    assert!(out.acked);
    assert_eq!(out.consumed_at, Some(h.t(0)));
    let again = h
        .ack_with("jobs", &c.message_id, Some(&c.receipt), None)
        .await;
    assert_eq!((again.acked, again.consumed_at), (false, None));
}
