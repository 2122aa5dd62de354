//! Browsing a queue (the dashboard): keyset pages, state filters, search by
//! id and idempotency key, one message, and the single-message changes
//! `message_delete` and `dlq_redrive_one`.
//!
//! Over 400 lines: paging, filters, search and the single-message changes
//! share one seeded queue and its expectations.

use jiff::SignedDuration;
use onceq_store::{
    DlqRedriveOne, MessageDelete, MessageGet, MessageList, MessagePage, MessageRecord,
    SingleOutcome, StoreError,
};
use onceq_types::MessageStatus;

use crate::{Harness, MsgExt, fifo, msg, payload, payloads};

conformance!(
    list_pages_in_publish_order_by_cursor,
    list_filters_by_state_as_stats_count,
    list_refuses_bad_limits_and_gone,
    list_search_by_id_and_idempotency_key,
    list_and_get_are_scoped_to_the_queue_and_project,
    get_shows_what_the_store_knows,
    delete_one_spares_in_flight_messages,
    redrive_one_moves_one_dead_letter_back,
    redrive_one_refusals,
    redrive_one_into_fifo_appends_at_the_group_tail,
);

impl Harness {
    fn listing(&self, queue: &str) -> MessageList {
        MessageList {
            queue: self.q(queue),
            state: None,
            search: None,
            group_id: None,
            after_seq: None,
            limit: 100,
            now: self.now,
        }
    }

    async fn list(&self, p: MessageList) -> MessagePage {
        self.store.message_list(p).await.expect("message_list")
    }

    async fn list_ids(&self, p: MessageList) -> Vec<String> {
        ids(&self.list(p).await.messages)
    }

    async fn get_msg(&self, queue: &str, id: &str) -> Option<MessageRecord> {
        self.store
            .message_get(MessageGet {
                queue: self.q(queue),
                message_id: id.to_owned(),
                now: self.now,
            })
            .await
            .expect("message_get")
    }

    async fn delete_one(&self, queue: &str, id: &str) -> onceq_store::Result<SingleOutcome> {
        self.store
            .message_delete(MessageDelete {
                queue: self.q(queue),
                message_id: id.to_owned(),
                now: self.now,
            })
            .await
    }

    async fn redrive_one(&self, queue: &str, id: &str) -> onceq_store::Result<SingleOutcome> {
        self.store
            .dlq_redrive_one(DlqRedriveOne {
                queue: self.q(queue),
                message_id: id.to_owned(),
                now: self.now,
            })
            .await
            .map(|o| {
                assert_eq!(o.dead_letter_queue, format!("{queue}-dlq"));
                o.outcome
            })
    }

    /// Publishes one message and dead-letters it (nack without requeue).
    async fn dead_letter(&self, queue: &str, body: &str) -> String {
        let id = self.publish_one(queue, body).await.message_id;
        let c = self.claim_one(queue).await;
        assert_eq!(c.message_id, id);
        assert!(self.nack_claimed(queue, &c, false).await.dead_lettered);
        id
    }
}

fn ids(messages: &[MessageRecord]) -> Vec<String> {
    messages.iter().map(|m| m.message_id.clone()).collect()
}

async fn list_pages_in_publish_order_by_cursor(mut h: Harness) {
    let mut published = Vec::new();
    for n in 0..5 {
        published.push(h.publish_one("jobs", &payload(n)).await.message_id);
        h.advance(1);
    }
    let first = h
        .list(MessageList {
            limit: 2,
            ..h.listing("jobs")
        })
        .await;
    assert_eq!(ids(&first.messages), published[..2]);
    let cursor = first.next_after_seq.expect("a second page");
    assert_eq!(cursor, first.messages[1].seq);
    let m = &first.messages[0];
    assert_eq!(m.payload, payload(0));
    assert_eq!(m.status, MessageStatus::Available);
    assert_eq!((m.delivery_count, m.priority), (0, 0));
    assert_eq!((m.created_at, m.visible_at), (h.t(0), h.t(0)));
    assert_eq!(m.lease_expires_at, None);
    assert!(first.messages[0].seq < first.messages[1].seq);

    let second = h
        .list(MessageList {
            limit: 2,
            after_seq: Some(cursor),
            ..h.listing("jobs")
        })
        .await;
    assert_eq!(ids(&second.messages), published[2..4]);
    let last = h
        .list(MessageList {
            limit: 2,
            after_seq: second.next_after_seq,
            ..h.listing("jobs")
        })
        .await;
    assert_eq!(ids(&last.messages), published[4..]);
    assert_eq!(last.next_after_seq, None, "nothing follows the last page");

    // A page that ends exactly at the last message says so too.
    let exact = h
        .list(MessageList {
            limit: 5,
            ..h.listing("jobs")
        })
        .await;
    assert_eq!(exact.messages.len(), 5);
    assert_eq!(exact.next_after_seq, None);

    // Acked messages leave the listing; the cursor still works past them.
    let c = h.claim_one("jobs").await;
    assert!(h.ack("jobs", &c.message_id, Some(&c.receipt)).await);
    let after_ack = h
        .list(MessageList {
            limit: 2,
            after_seq: Some(i64::MIN),
            ..h.listing("jobs")
        })
        .await;
    assert_eq!(ids(&after_ack.messages), published[1..3]);
}

async fn list_filters_by_state_as_stats_count(mut h: Harness) {
    let leased = h.publish_one("jobs", &payload(0)).await.message_id;
    let available = h.publish_one("jobs", &payload(1)).await.message_id;
    let later = h
        .publish_msg("jobs", msg(&payload(2)).delay(600))
        .await
        .message_id;
    let soon = h
        .publish_msg("jobs", msg(&payload(3)).delay(10))
        .await
        .message_id;
    let c = h.claim_one("jobs").await;
    assert_eq!(c.message_id, leased);
    h.advance(20);
    // `soon` is due: available, as stats count it, though not yet promoted.
    let s = h.stats("jobs").await;
    assert_eq!((s.available, s.delayed, s.in_flight), (2, 1, 1));

    let by = |state| MessageList {
        state: Some(state),
        ..h.listing("jobs")
    };
    assert_eq!(
        h.list_ids(by(MessageStatus::Available)).await,
        vec![available.clone(), soon.clone()]
    );
    let delayed = h.list(by(MessageStatus::Delayed)).await.messages;
    assert_eq!(ids(&delayed), vec![later.clone()]);
    assert_eq!(delayed[0].visible_at, h.t(600));
    let in_flight = h.list(by(MessageStatus::InFlight)).await.messages;
    assert_eq!(ids(&in_flight), vec![leased.clone()]);
    assert_eq!(in_flight[0].lease_expires_at, Some(c.lease_expires_at));
    assert_eq!(in_flight[0].delivery_count, 1);

    let all = h.list(h.listing("jobs")).await.messages;
    assert_eq!(ids(&all), vec![leased, available, later, soon]);
    let statuses: Vec<_> = all.iter().map(|m| m.status).collect();
    use MessageStatus::*;
    assert_eq!(statuses, vec![InFlight, Available, Delayed, Available]);
}

async fn list_refuses_bad_limits_and_gone(h: Harness) {
    h.publish_one("jobs", &payload(0)).await;
    for limit in [0, onceq_store::MAX_LIST_LIMIT + 1] {
        let err = h
            .store
            .message_list(MessageList {
                limit,
                ..h.listing("jobs")
            })
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Invalid(m) if m.contains("limit")));
    }
    let err = h
        .store
        .message_list(MessageList {
            state: Some(MessageStatus::Gone),
            ..h.listing("jobs")
        })
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Invalid(m) if m.contains("state")));
    let max = h
        .list(MessageList {
            limit: onceq_store::MAX_LIST_LIMIT,
            ..h.listing("jobs")
        })
        .await;
    assert_eq!(max.messages.len(), 1);
}

async fn list_search_by_id_and_idempotency_key(mut h: Harness) {
    h.dedupe_window = SignedDuration::from_secs(60);
    let first = h
        .publish_msg("jobs", msg(&payload(1)).key("order-7"))
        .await
        .message_id;
    let plain = h.publish_one("jobs", &payload(2)).await.message_id;
    h.publish_msg("other", msg(&payload(1)).key("order-7"))
        .await;
    // The key's window passes: the same key stores a second message.
    h.advance(61);
    let second = h
        .publish_msg("jobs", msg(&payload(3)).key("order-7"))
        .await
        .message_id;
    assert_ne!(first, second);

    let search = |s: &str| MessageList {
        search: Some(s.to_owned()),
        group_id: None,
        ..h.listing("jobs")
    };
    assert_eq!(h.list_ids(search(&plain)).await, vec![plain.clone()]);
    let by_key = h.list(search("order-7")).await;
    assert_eq!(ids(&by_key.messages), vec![first.clone(), second.clone()]);
    assert_eq!(
        by_key.messages[0].idempotency_key.as_deref(),
        Some("order-7")
    );
    assert!(h.list_ids(search("nope")).await.is_empty());
    assert!(h.list_ids(search("order-")).await.is_empty(), "exact match");

    // Paged and filtered like a listing.
    let page = h
        .list(MessageList {
            limit: 1,
            ..search("order-7")
        })
        .await;
    assert_eq!(ids(&page.messages), vec![first.clone()]);
    let rest = h
        .list(MessageList {
            limit: 1,
            after_seq: page.next_after_seq,
            ..search("order-7")
        })
        .await;
    assert_eq!(
        (ids(&rest.messages), rest.next_after_seq),
        (vec![second.clone()], None)
    );
    let c = h.claim_one("jobs").await;
    assert_eq!(c.message_id, first);
    assert_eq!(
        h.list_ids(MessageList {
            state: Some(MessageStatus::InFlight),
            ..search("order-7")
        })
        .await,
        vec![first.clone()]
    );
}

async fn list_and_get_are_scoped_to_the_queue_and_project(h: Harness) {
    let mine = h.publish_one("jobs", &payload(1)).await.message_id;
    let elsewhere = h.publish_one("other", &payload(2)).await.message_id;
    let b = h.as_project("proj-b").await;
    let theirs = b.publish_one("jobs", &payload(3)).await.message_id;

    assert_eq!(h.list_ids(h.listing("jobs")).await, vec![mine.clone()]);
    assert_eq!(b.list_ids(b.listing("jobs")).await, vec![theirs.clone()]);
    let search = |s: &str| MessageList {
        search: Some(s.to_owned()),
        group_id: None,
        ..h.listing("jobs")
    };
    assert!(h.list_ids(search(&elsewhere)).await.is_empty());
    assert!(h.list_ids(search(&theirs)).await.is_empty());
    assert!(h.get_msg("jobs", &elsewhere).await.is_none());
    assert!(h.get_msg("jobs", &theirs).await.is_none());
    assert!(h.get_msg("jobs", &mine).await.is_some());

    let err = h
        .store
        .message_list(h.listing("nowhere"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::QueueNotFound));
    let err = h
        .store
        .message_get(MessageGet {
            queue: h.q("nowhere"),
            message_id: mine.clone(),
            now: h.now,
        })
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::QueueNotFound));
    assert!(matches!(
        h.delete_one("nowhere", &mine).await,
        Err(StoreError::QueueNotFound)
    ));
}

async fn get_shows_what_the_store_knows(mut h: Harness) {
    let p = h
        .publish_msg(
            "jobs",
            msg(r#"{"to":"a@example.com"}"#)
                .key("k1")
                .delay(30)
                .priority(5)
                .group("g1"),
        )
        .await;
    let m = h.get_msg("jobs", &p.message_id).await.unwrap();
    assert_eq!(m.payload, r#"{"to":"a@example.com"}"#);
    assert_eq!(m.status, MessageStatus::Delayed);
    assert_eq!((m.created_at, m.visible_at), (h.t(0), h.t(30)));
    assert_eq!(m.idempotency_key.as_deref(), Some("k1"));
    assert_eq!(m.group_id.as_deref(), Some("g1"));
    assert_eq!(m.priority, 5);

    h.advance(30);
    let c = h.claim_one("jobs").await;
    let m = h.get_msg("jobs", &p.message_id).await.unwrap();
    assert_eq!(m.status, MessageStatus::InFlight);
    assert_eq!(m.delivery_count, 1);
    assert_eq!(m.lease_expires_at, Some(c.lease_expires_at));

    // Dead-lettered: the DLQ holds it now, with its deliveries.
    assert!(h.nack_claimed("jobs", &c, false).await.dead_lettered);
    assert!(h.get_msg("jobs", &p.message_id).await.is_none());
    let dead = h.get_msg("jobs-dlq", &p.message_id).await.unwrap();
    assert_eq!(dead.status, MessageStatus::Available);
    assert_eq!(dead.delivery_count, 1);
    assert_eq!(dead.lease_expires_at, None);
    assert_eq!(dead.created_at, h.t(0));
}

async fn delete_one_spares_in_flight_messages(h: Harness) {
    let a = h.publish_one("jobs", &payload(1)).await.message_id;
    let b = h.publish_one("jobs", &payload(2)).await.message_id;
    let c = h.claim_one("jobs").await;
    assert_eq!(c.message_id, a);

    assert_eq!(
        h.delete_one("jobs", &a).await.unwrap(),
        SingleOutcome::InFlight
    );
    assert_eq!(h.delete_one("jobs", &b).await.unwrap(), SingleOutcome::Done);
    assert_eq!(
        h.delete_one("jobs", &b).await.unwrap(),
        SingleOutcome::NotFound
    );
    h.publish_one("other", &payload(3)).await;
    assert_eq!(
        h.delete_one("other", &a).await.unwrap(),
        SingleOutcome::NotFound,
        "another queue's message is not found"
    );
    let s = h.stats("jobs").await;
    assert_eq!((s.available, s.in_flight), (0, 1));
    assert!(
        h.ack("jobs", &a, Some(&c.receipt)).await,
        "its holder still acks it"
    );
}

async fn redrive_one_moves_one_dead_letter_back(mut h: Harness) {
    let first = h.dead_letter("jobs", &payload(1)).await;
    let second = h.dead_letter("jobs", &payload(2)).await;
    h.advance(5);
    let s = h.stats("jobs").await;
    assert_eq!((s.message_count, s.dead_lettered), (0, 2));

    assert_eq!(
        h.redrive_one("jobs", &second).await.unwrap(),
        SingleOutcome::Done
    );
    let s = h.stats("jobs").await;
    assert_eq!((s.available, s.dead_lettered), (1, 1));
    let back = h.get_msg("jobs", &second).await.unwrap();
    assert_eq!(back.delivery_count, 0, "redrive resets the count");
    assert_eq!(back.status, MessageStatus::Available);
    assert_eq!(back.visible_at, h.now);
    assert!(
        h.get_msg("jobs-dlq", &first).await.is_some(),
        "the other stays"
    );
    assert_eq!(
        h.redrive_one("jobs", &second).await.unwrap(),
        SingleOutcome::NotFound
    );
    // A dead letter someone consumes from the DLQ stays with its holder.
    let held = h.claim_one("jobs-dlq").await;
    assert_eq!(held.message_id, first);
    assert_eq!(
        h.redrive_one("jobs", &first).await.unwrap(),
        SingleOutcome::InFlight
    );
    assert_eq!(h.claim_one("jobs").await.message_id, second);
}

async fn redrive_one_refusals(h: Harness) {
    let id = h.dead_letter("jobs", &payload(1)).await;
    assert!(matches!(
        h.redrive_one("nowhere", &id).await,
        Err(StoreError::QueueNotFound)
    ));
    // The DLQ itself has no DLQ.
    let err = h
        .store
        .dlq_redrive_one(DlqRedriveOne {
            queue: h.q("jobs-dlq"),
            message_id: id.clone(),
            now: h.now,
        })
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Invalid(m) if m.contains("no dead-letter queue")));
    // A message of the queue itself is not a dead letter of it.
    let live = h.publish_one("jobs", &payload(2)).await.message_id;
    assert_eq!(
        h.redrive_one("jobs", &live).await.unwrap(),
        SingleOutcome::NotFound
    );
    assert_eq!(h.stats("jobs").await.dead_lettered, 1);
}

async fn redrive_one_into_fifo_appends_at_the_group_tail(h: Harness) {
    h.create("orders", fifo()).await.unwrap();
    let a0 = h
        .publish_msg("orders", msg(&payload(0)).group("a"))
        .await
        .message_id;
    let c = h.claim_one("orders").await;
    assert!(h.nack_claimed("orders", &c, false).await.dead_lettered);
    let a1 = h
        .publish_msg("orders", msg(&payload(1)).group("a"))
        .await
        .message_id;
    // A dead letter without a group joins `default` on its way back.
    let loose = h.publish_one("orders-dlq", &payload(9)).await.message_id;

    assert_eq!(
        h.redrive_one("orders", &a0).await.unwrap(),
        SingleOutcome::Done
    );
    assert_eq!(
        h.redrive_one("orders", &loose).await.unwrap(),
        SingleOutcome::Done
    );
    // a0 now queues behind a1 in its group.
    assert_eq!(
        h.list_ids(h.listing("orders")).await,
        vec![a1.clone(), a0.clone(), loose.clone()]
    );
    let back = h.get_msg("orders", &loose).await.unwrap();
    assert_eq!(back.group_id.as_deref(), Some("default"));
    let got = h.claim("orders", 10).await;
    assert_eq!(payloads(&got), vec![payload(1), payload(9)]);
    assert!(h.ack("orders", &a1, None).await);
    assert_eq!(h.claim_one("orders").await.message_id, a0);
}
