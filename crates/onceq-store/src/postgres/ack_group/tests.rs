//! One group holding every case at once, acked by `commit` directly (the
//! conformance suite goes through `message_ack`, where how acks fall
//! into groups is up to timing).

use jiff::{SignedDuration, Timestamp};

use super::{Answer, Pending, commit};
use crate::postgres::PgStore;
use crate::postgres::hot::HotConnection;
use crate::{
    ClaimedMessage, LeaseRef, MessageAck, MessageClaim, MessagePublish, NewMessage, QueueRef, Store,
};

fn now() -> Timestamp {
    Timestamp::from_second(1_900_000_000).unwrap()
}

fn ack(
    queue: &str,
    id: &str,
    receipt: Option<&str>,
) -> (Pending, tokio::sync::oneshot::Receiver<Answer>) {
    let (reply, answer) = tokio::sync::oneshot::channel();
    let ack = MessageAck {
        lease: LeaseRef {
            queue: QueueRef::new("p", queue),
            message_id: id.into(),
            receipt: receipt.map(Into::into),
        },
        result: None,
        now: now(),
    };
    (Pending { ack, reply }, answer)
}

async fn claimed(store: &PgStore, queue: &str, n: usize) -> Vec<ClaimedMessage> {
    let message = NewMessage {
        payload: "{}".into(),
        delay: SignedDuration::ZERO,
        priority: 0,
        idempotency_key: None,
        group_id: None,
        headers: None,
        hand_out: None,
    };
    store
        .message_publish(MessagePublish {
            queue: QueueRef::new("p", queue),
            messages: vec![message; n],
            dedupe_window: SignedDuration::from_hours(24),
            new_queue_completed_retention: 0,
            now: now(),
        })
        .await
        .unwrap();
    let got = store
        .message_claim(MessageClaim {
            queue: QueueRef::new("p", queue),
            max: 10,
            visibility_timeout: None,
            now: now(),
        })
        .await
        .unwrap();
    assert_eq!(got.len(), n);
    got
}

#[tokio::test]
async fn one_group_answers_each_ack_as_if_alone() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    let m = claimed(&store, "q", 4).await;
    let other = claimed(&store, "other", 1).await;
    let cases = [
        // (ack, expected answer)
        (ack("q", &m[0].message_id, Some(&m[0].receipt)), true),
        // the same message again: one of the two deleted it
        (ack("q", &m[0].message_id, Some(&m[0].receipt)), false),
        (ack("q", &m[1].message_id, Some("rcpt_not_its")), false),
        (ack("q", &m[2].message_id, None), true),
        // right id, wrong queue
        (ack("q", &other[0].message_id, None), false),
        (ack("nowhere", &m[3].message_id, None), false),
        (ack("q", "qmsg_missing", None), false),
        (ack("q", &m[3].message_id, Some(&m[3].receipt)), true),
    ];
    let mut group = Vec::new();
    let mut expected = Vec::new();
    for ((pending, answer), want) in cases {
        group.push(pending);
        expected.push((answer, want));
    }
    commit(
        &mut HotConnection::new(store.db.clone()),
        group,
        crate::DEFAULT_OP_TIMEOUT,
    )
    .await;
    let mut got = Vec::new();
    for (answer, _) in &mut expected {
        got.push(answer.await.unwrap().unwrap().acked);
    }
    // Which of the two acks of m[0] is told it deleted it is the
    // database's choice; exactly one is.
    if got[1] {
        got.swap(0, 1);
    }
    let want: Vec<bool> = expected.iter().map(|(_, want)| *want).collect();
    assert_eq!(got, want);
    let left = |queue: &'static str| {
        let store = &store;
        async move {
            store
                .queue_stats(&QueueRef::new("p", queue), now())
                .await
                .unwrap()
                .message_count
        }
    };
    assert_eq!(
        left("q").await,
        1,
        "only the wrongly receipted message is left"
    );
    assert_eq!(left("other").await, 1);
}

/// Keeping acks (marked receipts, or none) and plain ones in one group:
/// each kind goes through its own statement, each answered as alone,
/// and each kept message carries its own ack's result.
#[tokio::test]
async fn keeping_and_plain_acks_in_one_group() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    store
        .queue_create(crate::QueueCreate {
            queue: QueueRef::new("p", "kept"),
            settings: onceq_types::queue::QueueSettings {
                completed_retention_seconds: 60,
                ..Default::default()
            },
            now: now(),
        })
        .await
        .unwrap();
    let k = claimed(&store, "kept", 3).await;
    let plain = claimed(&store, "q", 1).await;
    assert!(k.iter().all(|c| c.receipt.starts_with("rcpt_k")));
    let with = |mut p: (Pending, _), result: &str| {
        p.0.ack.result = Some(result.to_owned());
        p
    };
    let cases = [
        (
            with(ack("kept", &k[0].message_id, Some(&k[0].receipt)), "1"),
            true,
        ),
        (
            ack("q", &plain[0].message_id, Some(&plain[0].receipt)),
            true,
        ),
        (with(ack("kept", &k[1].message_id, None), "2"), true),
        (ack("kept", &k[2].message_id, Some("rcpt_knot_its")), false),
    ];
    let mut group = Vec::new();
    let mut answers = Vec::new();
    for ((pending, answer), want) in cases {
        group.push(pending);
        answers.push((answer, want));
    }
    commit(
        &mut HotConnection::new(store.db.clone()),
        group,
        crate::DEFAULT_OP_TIMEOUT,
    )
    .await;
    for (answer, want) in answers {
        assert_eq!(answer.await.unwrap().unwrap().acked, want);
    }
    let result = |id: &str| {
        let store = &store;
        let id = id.to_owned();
        async move {
            store
                .message_find(crate::MessageGet {
                    queue: QueueRef::new("p", "kept"),
                    message_id: id,
                    now: now(),
                })
                .await
                .unwrap()
                .and_then(|f| f.finished)
                .and_then(|f| f.result)
        }
    };
    assert_eq!(result(&k[0].message_id).await.as_deref(), Some("1"));
    assert_eq!(result(&k[1].message_id).await.as_deref(), Some("2"));
    assert_eq!(result(&k[2].message_id).await, None, "still in flight");
}
