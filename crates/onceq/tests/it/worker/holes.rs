//! Holes 1, 2, 4 and 6 of the seed worker: a crash after the claim, a live
//! holder, receipt-less acks, a poison message.

use std::time::Duration;

use onceq::worker::{AFTER_FACT_CLAIM, Backoff};

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hole1_crash_after_fact_claim_is_taken_over_not_lost() {
    let (env, ctl) = env().await;
    publish(&env, Some("export:h1"), "req-h1").await;
    let crashing = worker(&env, &ctl, |_| {}).await;
    crashing.config().fail_points.arm(AFTER_FACT_CLAIM, 1);
    let t = crashing.drain().await.unwrap();
    assert_eq!((t.received, t.crashed), (1, 1));
    assert_eq!(
        fact_row(&env, "export:h1").await,
        Some(("running".into(), 1))
    );

    // The message comes back while the dead claim's lease still runs: the
    // seed acked it here as a duplicate and the work was lost. A `running`
    // fact is not `done`: the message is handed back, not acked.
    env.advance(31).await;
    let next = worker(&env, &ctl, |_| {}).await;
    let t = next.drain().await.unwrap();
    assert_eq!((t.received, t.deferred, t.duplicates, t.done), (1, 1, 0, 0));
    assert_eq!(stats(&env).await.message_count, 1);

    // Once the fact's lease has run out, the redelivery takes it over.
    env.advance(30).await;
    let t = next.drain().await.unwrap();
    assert_eq!((t.received, t.done), (1, 1));
    assert_eq!(fact_row(&env, "export:h1").await, Some(("done".into(), 2)));
    assert_each_job_done_once(&env, &["export:h1"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hole2_live_holder_means_not_mine_message_is_not_acked() {
    let (env, ctl) = env().await;
    publish(&env, Some("export:h2"), "req-h2").await;
    let first = worker(&env, &ctl, |_| {}).await;
    let second = worker(&env, &ctl, |_| {}).await;
    let gate = ctl.gate("export:h2");
    let busy = tokio::spawn({
        let first = first.clone();
        async move { first.run_once().await }
    });
    entered(&gate).await;

    // The first worker is still busy; its message lease (30 s) runs out,
    // its fact lease (60 s) does not.
    env.advance(31).await;
    let t = second.run_once().await.unwrap();
    assert_eq!((t.received, t.deferred, t.duplicates), (1, 1, 0));
    let s = stats(&env).await;
    assert_eq!(
        (s.message_count, s.delayed),
        (1, 1),
        "the deferred message must still be held"
    );

    // The first finishes: its work commits; its ack (old receipt) is refused.
    gate.release.notify_one();
    let t = busy.await.unwrap().unwrap();
    assert_eq!((t.done, t.ack_lost), (1, 1));
    assert_eq!(exports(&env, "export:h2").await, 1);

    // The deferred redelivery finds the fact done and acks it.
    env.advance(30).await;
    let t = second.drain().await.unwrap();
    assert_eq!((t.received, t.duplicates, t.done), (1, 1, 0));
    assert_eq!(second.metrics().deferred, 1);
    assert_each_job_done_once(&env, &["export:h2"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hole4_acks_carry_the_receipt() {
    let (env, ctl) = env().await;
    publish(&env, Some("export:h4"), "req-h4").await;
    let late = worker(&env, &ctl, |_| {}).await;
    let gate = ctl.gate("export:h4");
    let busy = tokio::spawn({
        let late = late.clone();
        async move { late.run_once().await }
    });
    entered(&gate).await;

    // The lease runs out and another consumer now holds the message.
    env.advance(31).await;
    let client = env.client();
    let opts = onceq::ConsumeOptions {
        max_messages: 1,
        visibility_timeout: Some(300),
        wait_seconds: 0,
    };
    let held = client
        .consume(QUEUE, opts)
        .await
        .unwrap()
        .pop()
        .expect("redelivered");

    // The late worker finishes and acks with its own (expired) receipt:
    // refused, the new holder's message stays.
    gate.release.notify_one();
    let t = busy.await.unwrap().unwrap();
    assert_eq!((t.done, t.ack_lost), (1, 1));
    let s = stats(&env).await;
    assert_eq!(
        (s.message_count, s.in_flight),
        (1, 1),
        "a late ack deleted another holder's message"
    );

    // The holder gives it back; the next delivery is a duplicate.
    let opts = onceq::NackOptions {
        receipt: Some(held.receipt),
        ..Default::default()
    };
    assert!(
        client
            .nack(QUEUE, &held.message_id, opts)
            .await
            .unwrap()
            .nacked
    );
    let t = late.drain().await.unwrap();
    assert_eq!((t.received, t.duplicates), (1, 1));
    assert_each_job_done_once(&env, &["export:h4"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hole6_poison_message_dead_letters_and_is_counted() {
    let (env, ctl) = env().await;
    publish(&env, Some("export:fine"), "req-fine").await;
    publish(&env, Some("export:poison"), "req-poison").await;
    ctl.fail("export:poison");
    let retry = Backoff {
        base: Duration::from_secs(2),
        max: Duration::from_secs(300),
    };
    let w = worker(&env, &ctl, |c| c.retry = retry).await;

    let t = w.drain().await.unwrap();
    assert_eq!((t.done, t.failed, t.dead_lettered), (1, 1, 0));
    // Rolled back (its row is gone), released, and nacked with a delay.
    assert_eq!(exports(&env, "export:poison").await, 0);
    assert_eq!(fact_row(&env, "export:poison").await, None);
    assert_eq!(stats(&env).await.delayed, 1);

    // Hand-outs 2..=4 (max_retries 3): the fourth failure dead-letters.
    let mut total = t;
    for _ in 0..3 {
        env.advance(600).await;
        total += w.drain().await.unwrap();
    }
    assert_eq!((total.failed, total.dead_lettered), (4, 1));
    assert_eq!(w.metrics().dead_lettered, 1);
    let s = stats(&env).await;
    assert_eq!((s.message_count, s.dead_lettered), (0, 1));

    // Fixed and redriven, it is done once.
    ctl.heal("export:poison");
    assert_eq!(env.client().redrive(QUEUE, None).await.unwrap().redriven, 1);
    let t = w.drain().await.unwrap();
    assert_eq!(t.done, 1);
    assert_each_job_done_once(&env, &["export:fine", "export:poison"]).await;
}
