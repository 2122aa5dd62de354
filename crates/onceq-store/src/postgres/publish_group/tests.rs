//! One group holding every case at once, stored by `commit` directly (the
//! conformance suite goes through `message_publish`, where how requests
//! fall into groups is up to timing).

use jiff::{SignedDuration, Timestamp};
use onceq_types::MessageStatus;
use onceq_types::queue::{QueueSettings, QueueType};
use tokio::sync::oneshot;

use super::{Answer, Batch, Pending, QueueCache, commit, group_once};
use crate::postgres::PgStore;
use crate::postgres::hot::HotConnection;
use crate::{MessagePublish, NewMessage, QueueCreate, QueueRef, Store, StoreError};

fn now() -> Timestamp {
    Timestamp::from_second(1_900_000_000).unwrap()
}

fn message(payload: &str, key: Option<&str>) -> NewMessage {
    NewMessage {
        payload: payload.into(),
        delay: SignedDuration::ZERO,
        priority: 0,
        idempotency_key: key.map(Into::into),
        group_id: None,
        headers: None,
        hand_out: None,
    }
}

fn publish(queue: &str, messages: Vec<NewMessage>) -> MessagePublish {
    MessagePublish {
        queue: QueueRef::new("p", queue),
        messages,
        dedupe_window: SignedDuration::from_hours(24),
        new_queue_completed_retention: 0,
        now: now(),
    }
}

fn pending(p: MessagePublish) -> (Pending, oneshot::Receiver<Answer>) {
    let batch = Batch::new(&p).unwrap();
    let (reply, answer) = oneshot::channel();
    let carried = None;
    (
        Pending {
            p,
            batch,
            carried,
            reply,
        },
        answer,
    )
}

async fn create_fifo(store: &PgStore, queue: &str) {
    let settings = QueueSettings {
        queue_type: QueueType::Fifo,
        ..QueueSettings::default()
    };
    store
        .queue_create(QueueCreate {
            queue: QueueRef::new("p", queue),
            settings,
            now: now(),
        })
        .await
        .unwrap();
}

async fn count(store: &PgStore, queue: &str) -> i64 {
    store
        .queue_stats(&QueueRef::new("p", queue), now())
        .await
        .unwrap()
        .message_count
}

#[tokio::test]
async fn one_group_answers_each_publish_as_if_alone() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    create_fifo(&store, "ordered").await;
    // Held before the group: `old` with payload 1.
    store
        .message_publish(publish("jobs", vec![message("1", Some("old"))]))
        .await
        .unwrap();

    let cases = [
        // 0, 1: the same key twice across publishes
        publish("jobs", vec![message("2", Some("twice"))]),
        publish("jobs", vec![message("2", Some("twice"))]),
        // 2: takes `mine`, then reuses `old` with another payload: fails,
        // and gives `mine` back
        publish(
            "jobs",
            vec![message("3", Some("mine")), message("9", Some("old"))],
        ),
        // 3: a queue that does not exist yet
        publish("fresh", vec![message("4", None)]),
        // 4: one key twice in one batch
        publish(
            "jobs",
            vec![message("5", Some("dup")), message("5", Some("dup"))],
        ),
        // 5: a replay of `old`
        publish("jobs", vec![message("1", Some("old"))]),
        // 6: a FIFO queue
        publish("ordered", vec![message("6", None), message("7", None)]),
    ];
    let (group, answers): (Vec<_>, Vec<_>) = cases.into_iter().map(pending).unzip();
    commit(
        &mut HotConnection::new(store.db.clone()),
        &QueueCache::default(),
        group,
        crate::DEFAULT_OP_TIMEOUT,
    )
    .await;
    let mut answers: Vec<Vec<_>> = {
        let mut out = Vec::new();
        for (i, a) in answers.into_iter().enumerate() {
            match a.await.unwrap() {
                Ok(outcomes) => out.push(outcomes),
                Err(StoreError::IdempotencyKeyReused { index, key }) => {
                    assert_eq!((i, index, key.as_str()), (2, 1, "old"));
                    out.push(Vec::new());
                }
                Err(e) => panic!("publish {i} failed: {e}"),
            }
        }
        out
    };

    let (first, second) = (answers[0].remove(0), answers[1].remove(0));
    assert!(!first.replay && second.replay);
    assert_eq!(first.message_id, second.message_id);
    assert!(answers[2].is_empty(), "the failed publish has no outcomes");
    assert_eq!(answers[3][0].status, MessageStatus::Available);
    let (a, b) = (&answers[4][0], &answers[4][1]);
    assert!(!a.replay && b.replay && a.message_id == b.message_id);
    assert!(answers[5][0].replay);
    assert_eq!(answers[5][0].status, MessageStatus::Available);
    assert_eq!(answers[6].len(), 2);

    // jobs: old, twice, dup. Nothing of the failed publish.
    assert_eq!(count(&store, "jobs").await, 3);
    assert_eq!(count(&store, "fresh").await, 1);
    assert_eq!(count(&store, "ordered").await, 2);
    // `mine` was given back: another payload under it is a new message.
    let again = store
        .message_publish(publish("jobs", vec![message("8", Some("mine"))]))
        .await
        .unwrap();
    assert!(!again[0].replay);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_queue_is_not_trusted_from_the_cache() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    let keyed = || publish("jobs", vec![message("1", Some("k"))]);
    store.message_publish(keyed()).await.unwrap();
    // Many rounds, on threads: when the pipeline's answers reach the group
    // is up to scheduling, and every round must act on the cause (the
    // stale id's publish left unstored, retried), never on the "transaction
    // is aborted" answers of the statements after it.
    for round in 0..50 {
        // The committers now know `jobs` by its id; delete it under them.
        store
            .queue_delete(&QueueRef::new("p", "jobs"))
            .await
            .unwrap();
        let again = store
            .message_publish(keyed())
            .await
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert!(!again[0].replay, "the key went with its queue");
    }
    store
        .message_publish(publish("jobs", vec![message("2", None)]))
        .await
        .unwrap();
    assert_eq!(count(&store, "jobs").await, 2);
    // Without a key nothing fails under the stale id: the insert's join
    // just stores nothing, and the publish must be made again, alone.
    for round in 0..20 {
        store
            .queue_delete(&QueueRef::new("p", "jobs"))
            .await
            .unwrap();
        let again = store
            .message_publish(publish("jobs", vec![message("3", None)]))
            .await
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(again.len(), 1);
        assert_eq!(count(&store, "jobs").await, 1, "round {round}");
    }
}

/// The one-trip path (queues known, one message per publish): COMMIT is
/// pipelined, held keys are read after it.
#[tokio::test]
async fn one_trip_group_answers_each_publish_as_if_alone() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    let cache = QueueCache::default();
    // Through the same cache, so that `jobs` is known to it afterwards.
    let (warm, answer) = pending(publish("jobs", vec![message("1", Some("old"))]));
    commit(
        &mut HotConnection::new(store.db.clone()),
        &cache,
        vec![warm],
        crate::DEFAULT_OP_TIMEOUT,
    )
    .await;
    answer.await.unwrap().unwrap();

    let cases = [
        // 0, 1: one new key in two publishes: the second is put off to
        // the next group and replays the first
        publish("jobs", vec![message("2", Some("twice"))]),
        publish("jobs", vec![message("2", Some("twice"))]),
        // 2: `old` with another payload: fails, stores nothing
        publish("jobs", vec![message("9", Some("old"))]),
        // 3: a replay of `old`
        publish("jobs", vec![message("1", Some("old"))]),
        // 4, 5: no key; a new key
        publish("jobs", vec![message("4", None)]),
        publish("jobs", vec![message("5", Some("new"))]),
    ];
    let (group, answers): (Vec<_>, Vec<_>) = cases.into_iter().map(pending).unzip();
    commit(
        &mut HotConnection::new(store.db.clone()),
        &cache,
        group,
        crate::DEFAULT_OP_TIMEOUT,
    )
    .await;
    let mut got = Vec::new();
    for (i, a) in answers.into_iter().enumerate() {
        match a.await.unwrap() {
            Ok(mut outcomes) => got.push(Some(outcomes.remove(0))),
            Err(StoreError::IdempotencyKeyReused { index, key }) => {
                assert_eq!((i, index, key.as_str()), (2, 0, "old"));
                got.push(None);
            }
            Err(e) => panic!("publish {i} failed: {e}"),
        }
    }
    let replays: Vec<Option<bool>> = got.iter().map(|o| o.as_ref().map(|o| o.replay)).collect();
    assert_eq!(
        replays,
        [
            Some(false),
            Some(true),
            None,
            Some(true),
            Some(false),
            Some(false)
        ]
    );
    let id = |i: usize| got[i].as_ref().unwrap().message_id.clone();
    assert_eq!(id(0), id(1));
    // old, twice, the keyless one, new; nothing of the failed publish.
    assert_eq!(count(&store, "jobs").await, 4);
}

/// Publishes of one group carrying acks each get their own acks' answers,
/// from the group's one transaction; a publish without acks beside them
/// changes nothing.
#[tokio::test]
async fn each_publish_of_a_group_gets_its_carried_acks() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    for n in 0..3 {
        store
            .message_publish(publish("jobs", vec![message(&n.to_string(), None)]))
            .await
            .unwrap();
    }
    let claimed = store
        .message_claim(crate::MessageClaim {
            queue: QueueRef::new("p", "jobs"),
            max: 3,
            visibility_timeout: None,
            now: now(),
        })
        .await
        .unwrap();
    let ack = |i: usize, receipt: &str| crate::MessageAck {
        lease: crate::LeaseRef {
            queue: QueueRef::new("p", "jobs"),
            message_id: claimed[i].message_id.clone(),
            receipt: Some(receipt.to_owned()),
        },
        result: None,
        now: now(),
    };
    let carrying = [
        vec![ack(0, &claimed[0].receipt), ack(1, "rcpt_0")],
        Vec::new(),
        vec![ack(2, &claimed[2].receipt)],
    ];
    let mut group = Vec::new();
    let (mut acked, mut published) = (Vec::new(), Vec::new());
    for acks in carrying {
        // Each caller waits for its answer (a caller gone is left out).
        let (mut p, answer) = pending(publish("jobs", vec![message("new", None)]));
        published.push(answer);
        let (done, answer) = oneshot::channel();
        p.carried = (!acks.is_empty()).then(|| super::Carried { acks, done });
        group.push(p);
        acked.push(answer);
    }
    commit(
        &mut HotConnection::new(store.db.clone()),
        &QueueCache::default(),
        group,
        crate::DEFAULT_OP_TIMEOUT,
    )
    .await;
    let mut answers = Vec::new();
    for a in acked {
        answers.push(
            a.await
                .map(|o| o.iter().map(|o| o.acked).collect::<Vec<_>>()),
        );
    }
    assert_eq!(answers[0], Ok(vec![true, false]));
    assert!(answers[1].is_err(), "carried nothing, answered nothing");
    assert_eq!(answers[2], Ok(vec![true]));
    for p in published {
        assert_eq!(p.await.unwrap().unwrap().len(), 1);
    }
    // Left: the wrongly acked one and the three new messages.
    assert_eq!(count(&store, "jobs").await, 4);
}

/// A FIFO queue's keyed message is stored by its group's own transaction:
/// its key is taken with the standard queues' messages, its message
/// inserted after the FIFO locks, where the statement finds the key taken
/// earlier in the transaction (not in that statement's own claim). Through
/// `group_once`, so that a group falling back to publishes alone (which
/// would hide a message the group failed to store) fails the test.
#[tokio::test]
async fn a_fifo_message_whose_key_the_group_took_is_stored_by_the_group() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    create_fifo(&store, "ordered").await;
    let mut conn = HotConnection::new(store.db.clone());
    let cache = QueueCache::default();
    for replay in [false, true] {
        let (group, _answers): (Vec<_>, Vec<_>) = [
            publish("ordered", vec![message("1", Some("f"))]),
            publish("jobs", vec![message("2", Some("s"))]),
        ]
        .into_iter()
        .map(pending)
        .unzip();
        let (answers, _) = group_once(&mut conn, &cache, &group).await.unwrap();
        for answer in answers {
            let outcomes = answer.expect("stored by the group").unwrap();
            assert_eq!(outcomes[0].replay, replay);
        }
    }
    assert_eq!(count(&store, "ordered").await, 1);
    assert_eq!(count(&store, "jobs").await, 1);
}
