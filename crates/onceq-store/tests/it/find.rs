//! `message_find`: one message wherever its queue keeps it, in the queue
//! (its state as `queue_stats` counts it) or in its dead-letter queue.

use onceq_store::{FoundMessage, MessageGet, StoreError};
use onceq_types::MessageStatus;

use crate::{Harness, MsgExt, defaults, msg, payload};

conformance!(
    find_reports_the_state_in_the_queue,
    find_looks_in_the_dead_letter_queue,
    find_unknown_message_and_queue,
);

impl Harness {
    pub(crate) async fn find(
        &self,
        queue: &str,
        id: &str,
    ) -> onceq_store::Result<Option<FoundMessage>> {
        self.store
            .message_find(MessageGet {
                queue: self.q(queue),
                message_id: id.to_owned(),
                now: self.now,
            })
            .await
    }
}

async fn find_reports_the_state_in_the_queue(mut h: Harness) {
    let a = h.publish_msg("jobs", msg(&payload(1)).key("k-1")).await;
    let b = h.publish_msg("jobs", msg(&payload(2)).delay(60)).await;
    let found = h.find("jobs", &a.message_id).await.unwrap().unwrap();
    assert!(!found.dead_lettered);
    let r = &found.record;
    assert_eq!(
        (r.message_id.as_str(), r.payload.as_str(), r.status),
        (
            a.message_id.as_str(),
            payload(1).as_str(),
            MessageStatus::Available
        )
    );
    assert_eq!(r.idempotency_key.as_deref(), Some("k-1"));
    assert_eq!((r.delivery_count, r.created_at), (0, h.now));
    let delayed = h.find("jobs", &b.message_id).await.unwrap().unwrap();
    assert_eq!(delayed.record.status, MessageStatus::Delayed);

    let c = h.claim_one("jobs").await;
    let held = h.find("jobs", &c.message_id).await.unwrap().unwrap();
    assert_eq!(held.record.status, MessageStatus::InFlight);
    assert_eq!(held.record.lease_expires_at, Some(c.lease_expires_at));
    assert_eq!(held.record.delivery_count, 1);

    h.advance(60);
    let due = h.find("jobs", &b.message_id).await.unwrap().unwrap();
    assert_eq!(
        due.record.status,
        MessageStatus::Available,
        "due: available"
    );

    assert!(h.ack("jobs", &c.message_id, Some(&c.receipt)).await);
    assert_eq!(
        h.find("jobs", &c.message_id).await.unwrap(),
        None,
        "acked: gone"
    );
}

async fn find_looks_in_the_dead_letter_queue(h: Harness) {
    let p = h.publish_one("jobs", &payload(1)).await;
    let c = h.claim_one("jobs").await;
    assert!(h.nack_claimed("jobs", &c, false).await.dead_lettered);
    let found = h.find("jobs", &p.message_id).await.unwrap().unwrap();
    assert!(found.dead_lettered);
    assert_eq!(found.record.payload, payload(1));
    assert_eq!(
        found.record.delivery_count, 1,
        "kept from its last hand-out"
    );
    // Asked of the DLQ itself, it is one of its messages.
    let there = h.find("jobs-dlq", &p.message_id).await.unwrap().unwrap();
    assert!(!there.dead_lettered);
    assert_eq!(there.record.status, MessageStatus::Available);
}

async fn find_unknown_message_and_queue(h: Harness) {
    h.create("jobs", defaults()).await.unwrap();
    let other = h.publish_one("others", &payload(1)).await;
    assert_eq!(h.find("jobs", "qmsg_nope").await.unwrap(), None);
    assert_eq!(
        h.find("jobs", &other.message_id).await.unwrap(),
        None,
        "another queue's message is not this queue's"
    );
    let err = h.find("ghost", "qmsg_nope").await.unwrap_err();
    assert!(matches!(err, StoreError::QueueNotFound), "{err:?}");
}
