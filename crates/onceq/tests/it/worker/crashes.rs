//! Hole 3 and the other crash points: a process killed anywhere between
//! the claim and the ack loses nothing and repeats nothing.

use onceq::worker::{AFTER_ACK, AFTER_DONE, AFTER_WORK, MID_WORK};

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hole3_effect_and_fact_commit_together() {
    let (env, ctl) = env().await;
    for (fact, point) in [("export:mid", MID_WORK), ("export:after", AFTER_WORK)] {
        publish(&env, Some(fact), fact).await;
        let crashing = worker(&env, &ctl, |_| {}).await;
        crashing.config().fail_points.arm(point, 1);
        let t = crashing.drain().await.unwrap();
        assert_eq!((t.received, t.crashed), (1, 1), "{point}");
        // The handler wrote its row in the transaction; the crash took
        // both the row and the `done` mark with it.
        assert_eq!(
            exports(&env, fact).await,
            0,
            "{point}: effect committed without its fact"
        );
        assert_eq!(
            fact_row(&env, fact).await,
            Some(("running".into(), 1)),
            "{point}"
        );
    }

    env.advance(61).await;
    let t = worker(&env, &ctl, |_| {}).await.drain().await.unwrap();
    assert_eq!((t.received, t.done), (2, 2));
    assert_each_job_done_once(&env, &["export:mid", "export:after"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_after_done_before_ack_is_acked_as_duplicate() {
    let (env, ctl) = env().await;
    publish(&env, Some("export:unacked"), "req-unacked").await;
    let crashing = worker(&env, &ctl, |_| {}).await;
    crashing.config().fail_points.arm(AFTER_DONE, 1);
    let t = crashing.drain().await.unwrap();
    assert_eq!(t.crashed, 1);
    assert_eq!(exports(&env, "export:unacked").await, 1);
    assert_eq!(
        fact_row(&env, "export:unacked").await,
        Some(("done".into(), 1))
    );
    assert_eq!(stats(&env).await.in_flight, 1);

    env.advance(31).await;
    let t = worker(&env, &ctl, |_| {}).await.drain().await.unwrap();
    assert_eq!((t.received, t.duplicates, t.done), (1, 1, 0));
    assert_each_job_done_once(&env, &["export:unacked"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_after_ack_is_clean() {
    let (env, ctl) = env().await;
    publish(&env, Some("export:acked"), "req-acked").await;
    let crashing = worker(&env, &ctl, |_| {}).await;
    crashing.config().fail_points.arm(AFTER_ACK, 1);
    let t = crashing.drain().await.unwrap();
    assert_eq!((t.received, t.crashed), (1, 1));
    assert_eq!(
        fact_row(&env, "export:acked").await,
        Some(("done".into(), 1))
    );

    env.advance(61).await;
    let t = worker(&env, &ctl, |_| {}).await.drain().await.unwrap();
    assert_eq!(t.received, 0);
    assert_each_job_done_once(&env, &["export:acked"]).await;
}
