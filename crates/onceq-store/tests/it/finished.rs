//! Finished messages a queue keeps (`completed_retention_seconds`) and
//! `message_cancel`: acked messages kept as `completed` with their result,
//! cancelled ones as `cancelled`, out of every count and hand-out, purged
//! through the expiry index.

use onceq_store::{FinishedList, FinishedState, MessageCancel, NackBy, QueueChanges, StoreError};
use onceq_types::{AttemptOutcome, queue::QueueSettings};

use crate::{Harness, MsgExt, msg, payload};

conformance!(
    an_ack_of_a_keeping_queue_completes_the_message,
    without_retention_an_ack_keeps_nothing,
    a_kept_message_never_blocks_its_fifo_group,
    a_retention_change_applies_to_leases_granted_after_it,
    finished_messages_are_purged_when_their_time_is_up,
    queue_purge_and_delete_remove_finished_messages,
    cancel_removes_a_waiting_delayed_or_in_flight_message,
    cancel_keeps_the_message_while_the_queue_retains,
    cancel_of_a_fifo_head_lets_its_group_move_on,
    a_first_publish_creates_its_queue_with_the_given_retention,
    a_kept_message_keeps_the_latest_twenty_attempts_with_its_last,
);

fn keeping(secs: i32) -> QueueSettings {
    QueueSettings {
        completed_retention_seconds: secs,
        ..QueueSettings::default()
    }
}

impl Harness {
    async fn cancel(&self, queue: &str, id: &str) -> onceq_store::Result<bool> {
        self.store
            .message_cancel(MessageCancel {
                queue: self.q(queue),
                message_id: id.to_owned(),
                now: self.now,
            })
            .await
    }
}

async fn an_ack_of_a_keeping_queue_completes_the_message(mut h: Harness) {
    h.create("jobs", keeping(60)).await.unwrap();
    assert_eq!(h.get("jobs").await.unwrap().completed_retention_seconds, 60);
    let p = h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    h.advance(3);
    let out = h
        .ack_with(
            "jobs",
            &c.message_id,
            Some(&c.receipt),
            Some(r#"{"rows":3}"#),
        )
        .await;
    assert!(out.acked);
    assert_eq!(out.consumed_at, Some(h.t(0)));

    let found = h.find("jobs", &p.message_id).await.unwrap().unwrap();
    let finished = found.finished.expect("kept");
    assert_eq!(finished.state, FinishedState::Completed);
    assert_eq!(finished.finished_at, h.t(3));
    assert_eq!(finished.result.as_deref(), Some(r#"{"rows":3}"#));
    assert_eq!(found.record.payload, payload(1));
    assert_eq!(found.record.delivery_count, 1);
    let attempts = &found.record.attempts;
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].outcome, AttemptOutcome::Acked);
    assert_eq!(
        (attempts[0].consumed_at, attempts[0].ended_at),
        (Some(h.t(0)), h.t(3))
    );

    // Not held any more: no count, no hand-out, no second ack.
    let s = h.stats("jobs").await;
    assert_eq!((s.message_count, s.in_flight), (0, 0));
    assert!(h.claim("jobs", 10).await.is_empty());
    assert!(!h.ack("jobs", &c.message_id, None).await);
}

async fn without_retention_an_ack_keeps_nothing(h: Harness) {
    let p = h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    assert!(!c.receipt.starts_with("rcpt_k"), "a plain lease");
    let out = h
        .ack_with("jobs", &c.message_id, Some(&c.receipt), Some("{}"))
        .await;
    assert!(out.acked);
    assert_eq!(h.find("jobs", &p.message_id).await.unwrap(), None);
    // Without a receipt, too.
    let q = h.publish_one("jobs", &payload(2)).await;
    h.claim_one("jobs").await;
    assert!(h.ack_with("jobs", &q.message_id, None, None).await.acked);
    assert_eq!(h.find("jobs", &q.message_id).await.unwrap(), None);
}

async fn a_kept_message_never_blocks_its_fifo_group(h: Harness) {
    let settings = QueueSettings {
        completed_retention_seconds: 600,
        ..crate::fifo()
    };
    h.create("orders", settings).await.unwrap();
    h.publish(
        "orders",
        vec![msg(&payload(1)).group("g"), msg(&payload(2)).group("g")],
    )
    .await
    .unwrap();
    let first = h.claim_one("orders").await;
    assert!(
        h.ack("orders", &first.message_id, Some(&first.receipt))
            .await
    );
    let next = h.claim_one("orders").await;
    assert_eq!(next.payload, payload(2), "the group moved on");
}

async fn a_retention_change_applies_to_leases_granted_after_it(h: Harness) {
    let a = h.publish_one("jobs", &payload(1)).await;
    let b = h.publish_one("jobs", &payload(2)).await;
    let before = h.claim_one("jobs").await;
    let changes = QueueChanges {
        completed_retention_seconds: Some(60),
        ..QueueChanges::default()
    };
    h.update("jobs", changes).await.unwrap();
    let after = h.claim_one("jobs").await;
    assert!(
        h.ack("jobs", &before.message_id, Some(&before.receipt))
            .await
    );
    assert!(h.ack("jobs", &after.message_id, Some(&after.receipt)).await);
    assert_eq!(
        h.find("jobs", &a.message_id).await.unwrap(),
        None,
        "leased before the change: not kept"
    );
    let kept = h.find("jobs", &b.message_id).await.unwrap().unwrap();
    assert_eq!(kept.finished.unwrap().state, FinishedState::Completed);
}

async fn finished_messages_are_purged_when_their_time_is_up(mut h: Harness) {
    h.create("jobs", keeping(10)).await.unwrap();
    let p = h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    assert!(h.ack("jobs", &c.message_id, Some(&c.receipt)).await);
    h.advance(9);
    assert_eq!(h.store.finished_purge(h.now, 100).await.unwrap(), 0);
    assert!(h.find("jobs", &p.message_id).await.unwrap().is_some());
    h.advance(1);
    assert_eq!(h.store.finished_purge(h.now, 100).await.unwrap(), 1);
    assert_eq!(h.find("jobs", &p.message_id).await.unwrap(), None);
}

async fn queue_purge_and_delete_remove_finished_messages(h: Harness) {
    h.create("jobs", keeping(600)).await.unwrap();
    let p = h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    assert!(h.ack("jobs", &c.message_id, Some(&c.receipt)).await);
    assert_eq!(h.store.queue_purge(&h.q("jobs")).await.unwrap(), 0);
    assert_eq!(h.find("jobs", &p.message_id).await.unwrap(), None);

    let p = h.publish_one("jobs", &payload(2)).await;
    let c = h.claim_one("jobs").await;
    assert!(h.ack("jobs", &c.message_id, Some(&c.receipt)).await);
    h.store.queue_delete(&h.q("jobs")).await.unwrap();
    h.create("jobs", keeping(600)).await.unwrap();
    assert_eq!(h.find("jobs", &p.message_id).await.unwrap(), None);
    assert_eq!(h.store.finished_purge(h.t(10_000), 100).await.unwrap(), 0);
}

async fn cancel_removes_a_waiting_delayed_or_in_flight_message(h: Harness) {
    let waiting = h.publish_one("jobs", &payload(1)).await;
    let delayed = h.publish_msg("jobs", msg(&payload(2)).delay(60)).await;
    assert!(h.cancel("jobs", &waiting.message_id).await.unwrap());
    assert!(h.cancel("jobs", &delayed.message_id).await.unwrap());
    assert_eq!(h.stats("jobs").await.message_count, 0);
    assert!(
        !h.cancel("jobs", &waiting.message_id).await.unwrap(),
        "once"
    );

    let held = h.publish_one("jobs", &payload(3)).await;
    let c = h.claim_one("jobs").await;
    assert!(h.cancel("jobs", &held.message_id).await.unwrap());
    assert!(!h.ack("jobs", &c.message_id, Some(&c.receipt)).await);
    assert!(
        !h.extend("jobs", &c.message_id, Some(&c.receipt), 60)
            .await
            .extended
    );
    assert_eq!(h.find("jobs", &held.message_id).await.unwrap(), None);

    // A dead letter is the DLQ's: not cancelled through its source queue.
    let dead = h.publish_one("jobs", &payload(4)).await;
    let c = h.claim_one("jobs").await;
    assert!(h.nack_claimed("jobs", &c, false).await.dead_lettered);
    assert!(!h.cancel("jobs", &dead.message_id).await.unwrap());
    assert!(h.find("jobs", &dead.message_id).await.unwrap().is_some());

    assert!(matches!(
        h.cancel("nowhere", &dead.message_id).await,
        Err(StoreError::QueueNotFound)
    ));
}

async fn cancel_keeps_the_message_while_the_queue_retains(mut h: Harness) {
    h.create("jobs", keeping(60)).await.unwrap();
    let waiting = h.publish_one("jobs", &payload(1)).await;
    assert!(h.cancel("jobs", &waiting.message_id).await.unwrap());
    let found = h.find("jobs", &waiting.message_id).await.unwrap().unwrap();
    let finished = found.finished.unwrap();
    assert_eq!(
        (finished.state, finished.result),
        (FinishedState::Cancelled, None)
    );
    assert!(found.record.attempts.is_empty(), "never handed out");

    let held = h.publish_one("jobs", &payload(2)).await;
    h.claim_one("jobs").await;
    h.advance(4);
    assert!(h.cancel("jobs", &held.message_id).await.unwrap());
    let found = h.find("jobs", &held.message_id).await.unwrap().unwrap();
    assert_eq!(found.finished.unwrap().finished_at, h.t(4));
    let attempts = &found.record.attempts;
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].outcome, AttemptOutcome::Cancelled);
    assert_eq!(
        (attempts[0].consumed_at, attempts[0].ended_at),
        (Some(h.t(0)), h.t(4))
    );
    assert_eq!(h.stats("jobs").await.message_count, 0);
}

async fn cancel_of_a_fifo_head_lets_its_group_move_on(h: Harness) {
    h.create("orders", crate::fifo()).await.unwrap();
    let out = h
        .publish(
            "orders",
            vec![msg(&payload(1)).group("g"), msg(&payload(2)).group("g")],
        )
        .await
        .unwrap();
    let head = h.claim_one("orders").await;
    assert_eq!(head.message_id, out[0].message_id);
    assert!(h.claim("orders", 10).await.is_empty(), "the group waits");
    assert!(h.cancel("orders", &head.message_id).await.unwrap());
    assert_eq!(h.claim_one("orders").await.message_id, out[1].message_id);
}

async fn a_first_publish_creates_its_queue_with_the_given_retention(h: Harness) {
    let publish = |queue: &str| onceq_store::MessagePublish {
        queue: h.q(queue),
        messages: vec![msg(&payload(1))],
        dedupe_window: h.dedupe_window,
        new_queue_completed_retention: 45,
        now: h.now,
    };
    h.store.message_publish(publish("made")).await.unwrap();
    assert_eq!(h.get("made").await.unwrap().completed_retention_seconds, 45);
    // Its dead-letter queue keeps the default; an existing queue is left as it is.
    assert_eq!(
        h.get("made-dlq").await.unwrap().completed_retention_seconds,
        0
    );
    h.create("there", keeping(10)).await.unwrap();
    h.store.message_publish(publish("there")).await.unwrap();
    assert_eq!(
        h.get("there").await.unwrap().completed_retention_seconds,
        10
    );
}

/// A kept message's attempts end with the hand-out its ack or cancel ended,
/// within the same bound of twenty as every history, however the store
/// records that last attempt (PostgreSQL appends it as it reads the row,
/// migration V23), by id and in the list alike.
async fn a_kept_message_keeps_the_latest_twenty_attempts_with_its_last(mut h: Harness) {
    let settings = QueueSettings {
        max_retries: 1000,
        ..keeping(60)
    };
    h.create("jobs", settings).await.unwrap();
    let acked = h.publish_one("jobs", &payload(1)).await;
    let cancelled = h.publish_one("jobs", &payload(2)).await;
    for n in 1..=20 {
        for c in h.claim("jobs", 2).await {
            let error = format!("failure {n}");
            h.nack_failed("jobs", &c, true, Some(&error), NackBy::Consumer)
                .await;
        }
    }
    let leases = h.claim("jobs", 2).await;
    assert_eq!(leases.len(), 2);
    h.advance(2);
    for c in &leases {
        if c.message_id == acked.message_id {
            assert!(h.ack("jobs", &c.message_id, Some(&c.receipt)).await);
        } else {
            assert!(h.cancel("jobs", &c.message_id).await.unwrap());
        }
    }

    let listed = h
        .store
        .finished_list(FinishedList {
            queue: h.q("jobs"),
            before: None,
            limit: 10,
        })
        .await
        .unwrap();
    assert_eq!(listed.messages.len(), 2);
    for (id, last) in [
        (&acked.message_id, AttemptOutcome::Acked),
        (&cancelled.message_id, AttemptOutcome::Cancelled),
    ] {
        let found = h.find("jobs", id).await.unwrap().unwrap();
        let attempts = &found.record.attempts;
        let counts: Vec<i32> = attempts.iter().map(|a| a.delivery_count).collect();
        assert_eq!(counts, (2..=21).collect::<Vec<_>>(), "{id}");
        assert_eq!(attempts[18].error.as_deref(), Some("failure 20"));
        assert_eq!(attempts[19].outcome, last);
        assert_eq!(attempts[19].error, None);
        assert_eq!(attempts[19].ended_at, h.t(2));
        assert_eq!(attempts[19].consumed_at, Some(h.t(0)));
        let in_list = listed
            .messages
            .iter()
            .find(|m| &m.record.message_id == id)
            .expect("listed");
        assert_eq!(&in_list.record.attempts, attempts, "{id}");
    }
}
