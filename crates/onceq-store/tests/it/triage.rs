//! The dashboard's actions beyond browsing: `message_promote_now` (a
//! delayed message made available now), the bounded
//! `message_payload_search`, and `message_list`'s message-group filter.

use onceq_store::{
    MAX_PAYLOAD_SCAN, MessageList, MessagePromote, PayloadMatches, PayloadSearch, PromoteOutcome,
    StoreError,
};
use onceq_types::MessageStatus;

use crate::{Harness, MsgExt, fifo, msg, payload};

conformance!(
    promote_now_makes_a_delayed_message_available_in_its_place,
    promote_now_leaves_other_states_alone,
    promote_now_in_fifo_unblocks_the_group_head,
    payload_search_reads_only_the_newest_messages,
    payload_search_refuses_bad_bounds,
    list_filters_by_message_group,
);

impl Harness {
    async fn promote(&self, queue: &str, id: &str) -> onceq_store::Result<PromoteOutcome> {
        self.store
            .message_promote_now(MessagePromote {
                queue: self.q(queue),
                message_id: id.to_owned(),
                now: self.now,
            })
            .await
    }

    async fn search_payloads(
        &self,
        queue: &str,
        text: &str,
        scan: u32,
    ) -> onceq_store::Result<PayloadMatches> {
        self.store
            .message_payload_search(PayloadSearch {
                queue: self.q(queue),
                text: text.to_owned(),
                scan,
                limit: 50,
                now: self.now,
            })
            .await
    }

    fn all(&self, queue: &str) -> MessageList {
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
}

fn ids(page: &[onceq_store::MessageRecord]) -> Vec<String> {
    page.iter().map(|m| m.message_id.clone()).collect()
}

async fn promote_now_makes_a_delayed_message_available_in_its_place(mut h: Harness) {
    let first = h.publish_one("jobs", &payload(0)).await.message_id;
    let later = h
        .publish_msg("jobs", msg(&payload(1)).delay(3600))
        .await
        .message_id;
    h.advance(5);
    assert_eq!(h.stats("jobs").await.delayed, 1);

    assert_eq!(
        h.promote("jobs", &later).await.unwrap(),
        PromoteOutcome::Promoted
    );
    let s = h.stats("jobs").await;
    assert_eq!((s.available, s.delayed), (2, 0));
    let page = h.store.message_list(h.all("jobs")).await.unwrap().messages;
    assert_eq!(ids(&page), vec![first.clone(), later.clone()], "seq kept");
    assert_eq!(page[1].status, MessageStatus::Available);
    assert_eq!(page[1].visible_at, h.t(5), "its delay ended now");

    // The next claim hands it out (after the older one).
    let claimed = h.claim("jobs", 10).await;
    let got: Vec<_> = claimed.iter().map(|c| c.message_id.clone()).collect();
    assert_eq!(got, vec![first, later]);
}

async fn promote_now_leaves_other_states_alone(mut h: Harness) {
    let available = h.publish_one("jobs", &payload(0)).await.message_id;
    let due = h
        .publish_msg("jobs", msg(&payload(1)).delay(10))
        .await
        .message_id;
    h.advance(20);
    // `due` counts as available already: nothing to promote.
    assert_eq!(
        h.promote("jobs", &due).await.unwrap(),
        PromoteOutcome::NotDelayed
    );
    let held = h.claim_one("jobs").await;
    assert_eq!(held.message_id, available);
    assert_eq!(
        h.promote("jobs", &available).await.unwrap(),
        PromoteOutcome::NotDelayed,
        "in flight"
    );
    assert_eq!(h.stats("jobs").await.in_flight, 1, "its lease is untouched");
    assert_eq!(
        h.promote("jobs", "no-such-message").await.unwrap(),
        PromoteOutcome::NotFound
    );
    // Another queue's message is not this queue's.
    let elsewhere = h
        .publish_msg("other", msg(&payload(2)).delay(600))
        .await
        .message_id;
    assert_eq!(
        h.promote("jobs", &elsewhere).await.unwrap(),
        PromoteOutcome::NotFound
    );
    assert_eq!(h.stats("other").await.delayed, 1);
    assert!(matches!(
        h.promote("nope", &elsewhere).await,
        Err(StoreError::QueueNotFound)
    ));
}

async fn promote_now_in_fifo_unblocks_the_group_head(h: Harness) {
    h.create("orders", fifo()).await.unwrap();
    let head = h
        .publish_msg("orders", msg(&payload(0)).group("a").delay(600))
        .await
        .message_id;
    let next = h
        .publish_msg("orders", msg(&payload(1)).group("a"))
        .await
        .message_id;
    assert!(
        h.claim("orders", 10).await.is_empty(),
        "a delayed head blocks its group"
    );
    assert_eq!(
        h.promote("orders", &head).await.unwrap(),
        PromoteOutcome::Promoted
    );
    let claimed = h.claim("orders", 10).await;
    let got: Vec<_> = claimed.iter().map(|c| c.message_id.clone()).collect();
    assert_eq!(got, vec![head], "the head goes first, still one per group");
    let _ = next;
}

async fn payload_search_reads_only_the_newest_messages(mut h: Harness) {
    let mut published = Vec::new();
    for n in 0..6 {
        let p = if n % 2 == 0 {
            format!(r#"{{"user":"alice","n":{n}}}"#)
        } else {
            format!(r#"{{"user":"bob","n":{n}}}"#)
        };
        published.push(h.publish_one("jobs", &p).await.message_id);
        h.advance(1);
    }
    h.publish_one("other", r#"{"user":"alice"}"#).await;

    // Everything read: newest first, only this queue's.
    let all = h.search_payloads("jobs", "alice", 100).await.unwrap();
    assert_eq!(
        ids(&all.messages),
        vec![
            published[4].clone(),
            published[2].clone(),
            published[0].clone()
        ]
    );
    assert_eq!((all.scanned, all.truncated), (6, false));

    // Bounded: only the newest 3 are read; the older matches are not found,
    // and the answer says the queue holds more.
    let some = h.search_payloads("jobs", "alice", 3).await.unwrap();
    assert_eq!(ids(&some.messages), vec![published[4].clone()]);
    assert_eq!((some.scanned, some.truncated), (3, true));
    // Exactly as many as the bound: not truncated.
    let exact = h.search_payloads("jobs", "bob", 6).await.unwrap();
    assert_eq!(exact.messages.len(), 3);
    assert!(!exact.truncated);

    // A plain substring, case-sensitive, quotes included; no patterns.
    assert_eq!(
        h.search_payloads("jobs", r#""user":"bob""#, 100)
            .await
            .unwrap()
            .messages
            .len(),
        3
    );
    assert!(
        h.search_payloads("jobs", "ALICE", 100)
            .await
            .unwrap()
            .messages
            .is_empty()
    );
    assert!(
        h.search_payloads("jobs", "%", 100)
            .await
            .unwrap()
            .messages
            .is_empty()
    );
    assert!(
        h.search_payloads("jobs", "a_ice", 100)
            .await
            .unwrap()
            .messages
            .is_empty()
    );

    // Whatever their state; a due delayed message reads as available.
    let c = h.claim_one("jobs").await;
    let hit = h.search_payloads("jobs", r#""n":0"#, 100).await.unwrap();
    assert_eq!(ids(&hit.messages), vec![c.message_id]);
    assert_eq!(hit.messages[0].status, MessageStatus::InFlight);

    // An empty queue: nothing read.
    h.create("empty", crate::defaults()).await.unwrap();
    let none = h.search_payloads("empty", "x", 10).await.unwrap();
    assert_eq!(
        (none.messages.len(), none.scanned, none.truncated),
        (0, 0, false)
    );
    assert!(matches!(
        h.search_payloads("nope", "x", 10).await,
        Err(StoreError::QueueNotFound)
    ));
}

async fn payload_search_refuses_bad_bounds(h: Harness) {
    h.publish_one("jobs", &payload(0)).await;
    for (scan, limit, text) in [
        (0, 10, "x"),
        (MAX_PAYLOAD_SCAN + 1, 10, "x"),
        (10, 0, "x"),
        (10, onceq_store::MAX_PAYLOAD_MATCHES + 1, "x"),
        (10, 10, ""),
    ] {
        let r = h
            .store
            .message_payload_search(PayloadSearch {
                queue: h.q("jobs"),
                text: text.into(),
                scan,
                limit,
                now: h.now,
            })
            .await;
        assert!(
            matches!(r, Err(StoreError::Invalid(_))),
            "{scan} {limit} {text:?}: {r:?}"
        );
    }
    assert!(
        h.search_payloads("jobs", "n", MAX_PAYLOAD_SCAN)
            .await
            .is_ok()
    );
}

async fn list_filters_by_message_group(h: Harness) {
    h.create("orders", fifo()).await.unwrap();
    let a0 = h
        .publish_msg("orders", msg(&payload(0)).group("a"))
        .await
        .message_id;
    let b0 = h
        .publish_msg("orders", msg(&payload(1)).group("b"))
        .await
        .message_id;
    let a1 = h
        .publish_msg("orders", msg(&payload(2)).group("a"))
        .await
        .message_id;
    let group = |g: &str| MessageList {
        group_id: Some(g.to_owned()),
        ..h.all("orders")
    };
    let page = h.store.message_list(group("a")).await.unwrap();
    assert_eq!(ids(&page.messages), vec![a0.clone(), a1.clone()]);
    assert_eq!(page.messages[0].group_id.as_deref(), Some("a"));
    let b = h.store.message_list(group("b")).await.unwrap();
    assert_eq!(ids(&b.messages), vec![b0.clone()]);
    assert!(
        h.store
            .message_list(group("zzz"))
            .await
            .unwrap()
            .messages
            .is_empty()
    );
    // Paged like any listing, and combined with a search.
    let first = h
        .store
        .message_list(MessageList {
            limit: 1,
            ..group("a")
        })
        .await
        .unwrap();
    assert_eq!(ids(&first.messages), vec![a0.clone()]);
    let second = h
        .store
        .message_list(MessageList {
            after_seq: first.next_after_seq,
            ..group("a")
        })
        .await
        .unwrap();
    assert_eq!(ids(&second.messages), vec![a1]);
    let found = h
        .store
        .message_list(MessageList {
            search: Some(b0.clone()),
            ..group("a")
        })
        .await
        .unwrap();
    assert!(found.messages.is_empty(), "b0 is not in group a");
    let found = h
        .store
        .message_list(MessageList {
            search: Some(b0.clone()),
            ..group("b")
        })
        .await
        .unwrap();
    assert_eq!(ids(&found.messages), vec![b0]);
}
