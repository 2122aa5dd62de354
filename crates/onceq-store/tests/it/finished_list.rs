//! `finished_list`: a queue's kept finished messages (completed and
//! cancelled), newest end first, keyset-paged, bounded, per queue.

use onceq_store::{
    FinishedCursor, FinishedList, FinishedPage, FinishedState, MAX_FINISHED_LIMIT, MessageCancel,
    StoreError,
};
use onceq_types::{MessageStatus, queue::QueueSettings};

use crate::{Harness, payload};

conformance!(
    finished_messages_are_listed_newest_first_with_their_end,
    pages_follow_the_cursor_to_the_oldest,
    messages_ending_at_the_same_time_are_each_listed_once,
    the_list_holds_only_this_queues_finished_messages,
    the_limit_is_bounded_and_the_queue_must_exist,
);

fn keeping(secs: i32) -> QueueSettings {
    QueueSettings {
        completed_retention_seconds: secs,
        ..QueueSettings::default()
    }
}

impl Harness {
    async fn finished(
        &self,
        queue: &str,
        before: Option<FinishedCursor>,
        limit: u32,
    ) -> onceq_store::Result<FinishedPage> {
        self.store
            .finished_list(FinishedList {
                queue: self.q(queue),
                before,
                limit,
            })
            .await
    }

    /// Publishes, claims and acks one message with `result`; its id.
    async fn complete(&self, queue: &str, n: i64, result: Option<&str>) -> String {
        let p = self.publish_one(queue, &payload(n)).await;
        let c = self.claim_one(queue).await;
        assert_eq!(c.message_id, p.message_id);
        assert!(
            self.ack_with(queue, &c.message_id, Some(&c.receipt), result)
                .await
                .acked
        );
        p.message_id
    }
}

fn ids(page: &FinishedPage) -> Vec<&str> {
    page.messages
        .iter()
        .map(|m| m.record.message_id.as_str())
        .collect()
}

async fn finished_messages_are_listed_newest_first_with_their_end(mut h: Harness) {
    h.create("jobs", keeping(600)).await.unwrap();
    assert_eq!(h.finished("jobs", None, 10).await.unwrap().messages, vec![]);
    let first = h.complete("jobs", 1, Some(r#"{"rows":3}"#)).await;
    h.advance(1);
    let cancelled = h.publish_one("jobs", &payload(2)).await.message_id;
    assert!(
        h.store
            .message_cancel(MessageCancel {
                queue: h.q("jobs"),
                message_id: cancelled.clone(),
                now: h.now,
            })
            .await
            .unwrap()
    );
    h.advance(1);
    let waiting = h.publish_one("jobs", &payload(3)).await.message_id;

    let page = h.finished("jobs", None, 10).await.unwrap();
    assert_eq!(ids(&page), vec![cancelled.as_str(), first.as_str()]);
    assert_eq!(page.next, None);
    assert!(!ids(&page).contains(&waiting.as_str()), "not finished");
    let (newest, oldest) = (&page.messages[0], &page.messages[1]);
    assert_eq!(newest.finished.state, FinishedState::Cancelled);
    assert_eq!(newest.finished.finished_at, h.t(1));
    assert_eq!(newest.finished.result, None);
    assert_eq!(oldest.finished.state, FinishedState::Completed);
    assert_eq!(oldest.finished.finished_at, h.t(0));
    assert_eq!(oldest.finished.result.as_deref(), Some(r#"{"rows":3}"#));
    assert_eq!(oldest.record.payload, payload(1));
    assert_eq!(oldest.record.status, MessageStatus::Gone);
    assert_eq!(oldest.record.delivery_count, 1);
    assert_eq!(oldest.record.attempts.len(), 1);
    // What the list says of each is what message_find says.
    let found = h.find("jobs", &first).await.unwrap().unwrap();
    assert_eq!(found.record, oldest.record);
    assert_eq!(found.finished.as_ref(), Some(&oldest.finished));
}

async fn pages_follow_the_cursor_to_the_oldest(mut h: Harness) {
    h.create("jobs", keeping(600)).await.unwrap();
    let mut done = Vec::new();
    for n in 0..5 {
        done.push(h.complete("jobs", n, None).await);
        h.advance(1);
    }
    done.reverse();
    let first = h.finished("jobs", None, 2).await.unwrap();
    assert_eq!(ids(&first), vec![done[0].as_str(), done[1].as_str()]);
    let cursor = first.next.clone().expect("more follow");
    assert_eq!(cursor.message_id, done[1]);
    assert_eq!(cursor.finished_at, h.t(3));
    let second = h.finished("jobs", Some(cursor), 2).await.unwrap();
    assert_eq!(ids(&second), vec![done[2].as_str(), done[3].as_str()]);
    let last = h.finished("jobs", second.next.clone(), 2).await.unwrap();
    assert_eq!(ids(&last), vec![done[4].as_str()]);
    assert_eq!(last.next, None);
    // A page exactly as long as what is left says nothing follows.
    let all = h.finished("jobs", None, 5).await.unwrap();
    assert_eq!(all.messages.len(), 5);
    assert_eq!(all.next, None);
}

async fn messages_ending_at_the_same_time_are_each_listed_once(h: Harness) {
    h.create("jobs", keeping(600)).await.unwrap();
    let mut done = Vec::new();
    for n in 0..4 {
        done.push(h.complete("jobs", n, None).await);
    }
    let mut seen = Vec::new();
    let mut before = None;
    loop {
        let page = h.finished("jobs", before, 1).await.unwrap();
        seen.extend(ids(&page).into_iter().map(str::to_owned));
        match page.next {
            Some(next) => before = Some(next),
            None => break,
        }
    }
    // Same finished_at: the id orders them (in the database's collation,
    // the same for the cursor and the order), each listed once.
    assert_eq!(seen.len(), done.len(), "{seen:?}");
    seen.sort();
    done.sort();
    assert_eq!(seen, done);
}

async fn the_list_holds_only_this_queues_finished_messages(h: Harness) {
    h.create("jobs", keeping(600)).await.unwrap();
    h.create("other", keeping(600)).await.unwrap();
    let mine = h.complete("jobs", 1, None).await;
    h.complete("other", 2, None).await;
    let page = h.finished("jobs", None, 10).await.unwrap();
    assert_eq!(ids(&page), vec![mine.as_str()]);
    // A queue that keeps nothing lists nothing.
    h.create("plain", QueueSettings::default()).await.unwrap();
    h.complete("plain", 3, None).await;
    assert!(
        h.finished("plain", None, 10)
            .await
            .unwrap()
            .messages
            .is_empty()
    );
}

async fn the_limit_is_bounded_and_the_queue_must_exist(h: Harness) {
    h.create("jobs", keeping(600)).await.unwrap();
    for limit in [0, MAX_FINISHED_LIMIT + 1] {
        let err = h.finished("jobs", None, limit).await.unwrap_err();
        assert!(
            matches!(err, StoreError::Invalid(ref m) if m.contains("limit")),
            "{err:?}"
        );
    }
    assert!(h.finished("jobs", None, MAX_FINISHED_LIMIT).await.is_ok());
    assert!(matches!(
        h.finished("nope", None, 10).await,
        Err(StoreError::QueueNotFound)
    ));
}
