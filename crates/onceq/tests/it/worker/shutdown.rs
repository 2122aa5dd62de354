//! Hole 7: on SIGTERM (the token) the worker stops taking work, finishes
//! or releases what it holds, and `run` returns.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hole7_sigterm_stops_taking_work_and_settles() {
    let (env, ctl) = env().await;
    publish(&env, Some("export:running"), "req-running").await;
    // One permit: while the job runs the loop waits for it, and must not
    // take the next job when it comes back after the shutdown.
    let w = worker(&env, &ctl, |c| c.concurrency = 1).await;
    let gate = ctl.gate("export:running");
    let stop = CancellationToken::new();
    let running = tokio::spawn({
        let (w, stop) = (w.clone(), stop.clone());
        async move { w.run(stop).await }
    });
    entered(&gate).await;
    publish(&env, Some("export:later"), "req-later").await;

    stop.cancel();
    gate.release.notify_one();
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("run() did not return after shutdown")
        .unwrap()
        .unwrap();
    // The running job finished (committed and acked); the later one was
    // not taken.
    assert_eq!(w.metrics().done, 1);
    assert_eq!(exports(&env, "export:running").await, 1);
    assert_eq!(stats(&env).await.available, 1);

    // An idle worker in the middle of a 20 s long poll stops at once too.
    let idle = worker(&env, &ctl, |c| c.wait_seconds = 20).await;
    let stop = CancellationToken::new();
    let polling = tokio::spawn({
        let (idle, stop) = (idle.clone(), stop.clone());
        async move { idle.run(stop).await }
    });
    until("the idle worker's job", || idle.metrics().done == 1).await;
    until("its next long poll", || idle.metrics().polls >= 2).await;
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(5), polling)
        .await
        .expect("a long poll held up the shutdown")
        .unwrap()
        .unwrap();
    assert_each_job_done_once(&env, &["export:running", "export:later"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_grace_over_releases_the_job_for_the_next_worker() {
    let (env, ctl) = env().await;
    publish(&env, Some("export:stuck"), "req-stuck").await;
    let w = worker(&env, &ctl, |c| c.shutdown_grace = Duration::from_millis(50)).await;
    let gate = ctl.gate("export:stuck");
    let stop = CancellationToken::new();
    let running = tokio::spawn({
        let (w, stop) = (w.clone(), stop.clone());
        async move { w.run(stop).await }
    });
    entered(&gate).await;
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("run() did not return after the grace")
        .unwrap()
        .unwrap();
    // Released: no fact, no export, the message back at once (no delay).
    assert_eq!(w.metrics().abandoned, 1);
    assert_eq!(fact_row(&env, "export:stuck").await, None);
    assert_eq!(exports(&env, "export:stuck").await, 0);
    assert_eq!(stats(&env).await.available, 1);

    let t = worker(&env, &ctl, |_| {}).await.drain().await.unwrap();
    assert_eq!(t.done, 1);
    assert_each_job_done_once(&env, &["export:stuck"]).await;
}
