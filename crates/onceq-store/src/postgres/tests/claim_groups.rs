//! Claims of one queue at the same moment share one transaction
//! (`claim/group.rs`): each still gets its own share, its own acks'
//! answers and the group's failure as its own.
//!
//! The first claim is held at a table lock taken by another connection, so
//! that the claims started beside it are certain to wait for it and go
//! out together in the next group.

use std::time::Duration;

use futures_util::future::join_all;
use jiff::SignedDuration;

use super::*;
use crate::{LeaseRef, MessageAck, MessageClaim};

const LEASE: SignedDuration = SignedDuration::from_secs(30);

/// A claim of `queue` made `i` seconds after the messages' publish.
fn claim_at(queue: &str, max: u32, i: i64) -> MessageClaim {
    MessageClaim {
        queue: QueueRef::new("p", queue),
        max,
        visibility_timeout: Some(LEASE),
        now: publish(queue).now + SignedDuration::from_secs(i),
    }
}

/// Runs `claims` side by side while another connection holds
/// `onceq_messages` locked against writes, released once every claim
/// has been started (all of them at the first poll).
async fn held_back<F: Future>(url: &str, claims: Vec<F>) -> Vec<F::Output> {
    let lock = raw(url).await;
    lock.batch_execute("BEGIN; LOCK TABLE onceq_messages IN EXCLUSIVE MODE")
        .await
        .unwrap();
    let release = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        lock.batch_execute("COMMIT").await.unwrap();
    };
    tokio::join!(join_all(claims), release).0
}

async fn publish_n(store: &PgStore, queue: &str, n: usize) {
    for _ in 0..n {
        store.message_publish(publish(queue)).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_that_wait_for_one_go_out_together_each_with_its_share() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    publish_n(&store, "q", 12).await;
    // The first alone, then four asking 2 + 3 + 4 + 5 = 14 of the 11 left.
    let claims = [(1, 0), (2, 1), (3, 2), (4, 3), (5, 4)]
        .map(|(max, i)| store.message_claim(claim_at("q", max, i)));
    let answers: Vec<_> = held_back(&db.url, claims.into())
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let sizes: Vec<usize> = answers.iter().map(Vec::len).collect();
    // Hand-out order: the group's first claims are served in full.
    assert_eq!(sizes, [1, 2, 3, 4, 2]);
    let mut ids: Vec<&str> = answers
        .iter()
        .flatten()
        .map(|m| m.message_id.as_str())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 12, "every message handed out once");
    // The first claim's lease from its own call; the other four's from
    // the latest of theirs, so they were claimed in one statement.
    let base = publish("q").now;
    let lease_of = |i: usize| answers[i][0].lease_expires_at;
    assert_eq!(lease_of(0), base + LEASE);
    for i in 1..5 {
        assert_eq!(
            lease_of(i),
            base + SignedDuration::from_secs(4) + LEASE,
            "claim {i}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_claim_of_a_group_gets_the_answers_of_its_own_acks() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    publish_n(&store, "q", 5).await;
    let leased = store.message_claim(claim_at("q", 5, 0)).await.unwrap();
    let ack = |i: usize, receipt: &str| MessageAck {
        lease: LeaseRef {
            queue: QueueRef::new("p", "q"),
            message_id: leased[i].message_id.clone(),
            receipt: Some(receipt.to_owned()),
        },
        result: None,
        now: publish("q").now + SignedDuration::from_secs(1),
    };
    let good = |i: usize| ack(i, &leased[i].receipt);
    let carried = [
        vec![good(0)],
        vec![good(1), ack(2, "rcpt_not-this-lease")],
        vec![ack(3, "rcpt_not-this-lease"), good(4)],
    ];
    let claims = carried
        .into_iter()
        .enumerate()
        .map(|(i, acks)| store.message_ack_many_then_claim(acks, claim_at("q", 1, i as i64 + 1)))
        .collect();
    let acked: Vec<Vec<bool>> = held_back(&db.url, claims)
        .await
        .into_iter()
        .map(|answer| {
            let (acked, claimed) = answer.unwrap();
            assert!(claimed.is_empty(), "all five are in flight or gone");
            acked.into_iter().map(|a| a.acked).collect()
        })
        .collect();
    assert_eq!(acked, [vec![true], vec![true, false], vec![false, true]]);
    let stats = store
        .queue_stats(&QueueRef::new("p", "q"), publish("q").now)
        .await
        .unwrap();
    assert_eq!((stats.available, stats.in_flight), (0, 2));
}

/// A group's failure is every claim's own: a consume of a queue that does
/// not exist is a 404 to each caller, not the first one's 404 and the
/// others' 500.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_claim_of_a_group_is_told_its_queue_is_gone() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    publish_n(&store, "q", 1).await;
    let claims = (0..4)
        .map(|i| store.message_claim(claim_at("gone", 1, i)))
        .collect();
    for answer in held_back(&db.url, claims).await {
        let err = answer.unwrap_err();
        assert!(matches!(err, StoreError::QueueNotFound), "{err:?}");
    }
}

/// Claims of another queue do not wait for a queue's group.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_of_other_queues_do_not_wait() {
    let db = PgStore::test_database().await;
    // A bound far above what b's claim takes on a loaded machine: a's claim
    // then ends early only by going past the lock, never by timing out.
    let options = crate::StoreOptions {
        op_timeout: Duration::from_secs(120),
        ..Default::default()
    };
    let store = PgStore::connect_with(&db.url, options).await.unwrap();
    publish_n(&store, "a", 1).await;
    publish_n(&store, "b", 1).await;
    // Queue a with a limit: its claim's promotion locks the queue's row,
    // which another connection holds, so a's claim waits there.
    let lock = raw(&db.url).await;
    lock.batch_execute("UPDATE onceq_queues SET max_in_flight = 10 WHERE name = 'a'")
        .await
        .unwrap();
    lock.batch_execute("BEGIN; SELECT 1 FROM onceq_queues WHERE name = 'a' FOR UPDATE")
        .await
        .unwrap();
    let held = store.message_claim(claim_at("a", 1, 0));
    tokio::pin!(held);
    let other = async {
        // a's claim under way, then b's, which must not wait behind it.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let b = store.message_claim(claim_at("b", 1, 0)).await.unwrap();
        lock.batch_execute("COMMIT").await.unwrap();
        b
    };
    tokio::select! {
        a = &mut held => panic!("queue a's claim went past the lock on its row: {a:?}"),
        b = other => assert_eq!(b.len(), 1),
    }
    assert_eq!(held.await.unwrap().len(), 1);
}
