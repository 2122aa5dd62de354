//! Leases while a job runs: heartbeats keep both, even when every pooled
//! connection is held by a job; a takeover of a stalled holder's fact rolls
//! the holder back; the facts table is made once.

use std::time::Duration;

use onceq::worker::{Worker, WorkerConfig};

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_keeps_message_and_fact_leases() {
    let (env, ctl) = env().await;
    let id = publish(&env, Some("export:long"), "req-long").await;
    let w = worker(&env, &ctl, |c| c.heartbeat = Duration::from_millis(20)).await;
    let gate = ctl.gate("export:long");
    let busy = tokio::spawn({
        let w = w.clone();
        async move { w.run_once().await }
    });
    entered(&gate).await;

    // Move past the first lease in two steps, each followed by a heartbeat
    // that pushed both leases from the new time.
    for _ in 0..2 {
        env.advance(25).await;
        leases_pushed(&env, std::slice::from_ref(&id), &["export:long"]).await;
    }
    // 50 s in: past the 30 s visibility and near the 60 s fact lease, yet
    // nobody else can have the message, and the fact's lease moved on.
    let other = worker(&env, &ctl, |_| {}).await;
    assert_eq!(other.run_once().await.unwrap().received, 0);
    let until_ = fact_lease_end(&env, "export:long").await;
    assert!(
        until_ >= env.clock.now() + jiff::SignedDuration::from_secs(59),
        "{until_}"
    );

    gate.release.notify_one();
    let t = busy.await.unwrap().unwrap();
    assert_eq!((t.done, t.ack_lost), (1, 0));
    assert_each_job_done_once(&env, &["export:long"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_go_on_when_every_pooled_connection_is_held() {
    // concurrency = the pool's size (the exports example's --concurrency 16
    // on its 16-connection pool): each running job holds one pooled
    // connection for its transaction, so none is left for heartbeats.
    const FACTS: [&str; 3] = ["export:a", "export:b", "export:c"];
    let (env, ctl) = env().await;
    let gates: Vec<_> = FACTS.iter().map(|fact| ctl.gate(fact)).collect();
    let mut ids = Vec::new();
    for (i, fact) in FACTS.iter().enumerate() {
        ids.push(publish(&env, Some(fact), &format!("req-{i}")).await);
    }
    let config = WorkerConfig {
        concurrency: FACTS.len(),
        heartbeat: Duration::from_millis(20),
        ..config(&env)
    };
    let pool = crate::harness::pool_of(&env.app_db_url, FACTS.len());
    let w = Worker::new(env.client(), pool, config, Exports(ctl.clone()))
        .await
        .unwrap();
    let busy = tokio::spawn({
        let w = w.clone();
        async move { w.run_once().await }
    });
    for gate in &gates {
        entered(gate).await;
    }

    // As in the test above: past the first leases in two steps, each
    // followed by a heartbeat of every job from the new time.
    for _ in 0..2 {
        env.advance(25).await;
        leases_pushed(&env, &ids, &FACTS).await;
    }
    let other = worker(&env, &ctl, |_| {}).await;
    assert_eq!(
        other.run_once().await.unwrap().received,
        0,
        "a lease was lost"
    );
    for fact in FACTS {
        let until_ = fact_lease_end(&env, fact).await;
        assert!(
            until_ >= env.clock.now() + jiff::SignedDuration::from_secs(59),
            "{fact}: {until_}"
        );
    }

    for gate in &gates {
        gate.release.notify_one();
    }
    let t = busy.await.unwrap().unwrap();
    assert_eq!((t.done, t.ack_lost), (FACTS.len() as u64, 0));
    assert_each_job_done_once(&env, &FACTS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_heartbeat_that_cannot_extend_the_message_is_a_miss() {
    let (env, ctl) = env().await;
    publish(&env, Some("export:purged"), "req-purged").await;
    let w = worker(&env, &ctl, |c| c.heartbeat = Duration::from_millis(20)).await;
    let gate = ctl.gate("export:purged");
    let busy = tokio::spawn({
        let w = w.clone();
        async move { w.run_once().await }
    });
    entered(&gate).await;
    until("a heartbeat", || w.metrics().heartbeats >= 1).await;

    // The message goes from under the running job: its fact's lease still
    // moves on, its message lease cannot. Once three misses are counted no
    // beat that began before the purge is left, and no later one counts as
    // a heartbeat.
    assert_eq!(env.client().purge(QUEUE).await.unwrap(), 1);
    until("three misses", || w.metrics().heartbeat_misses >= 3).await;
    let beats = w.metrics().heartbeats;
    until("six misses", || w.metrics().heartbeat_misses >= 6).await;
    assert_eq!(
        w.metrics().heartbeats,
        beats,
        "a beat that moved no message lease counted"
    );

    gate.release.notify_one();
    let t = busy.await.unwrap().unwrap();
    assert_eq!((t.done, t.ack_lost), (1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn takeover_of_a_stalled_holder_rolls_the_holder_back() {
    let (env, ctl) = env().await;
    publish(&env, Some("export:stalled"), "req-stalled").await;
    let stalled = worker(&env, &ctl, |_| {}).await;
    let gate = ctl.gate("export:stalled");
    let busy = tokio::spawn({
        let stalled = stalled.clone();
        async move { stalled.run_once().await }
    });
    entered(&gate).await;

    // No heartbeat for longer than both leases: the holder counts as dead.
    env.advance(61).await;
    let t = worker(&env, &ctl, |_| {}).await.drain().await.unwrap();
    assert_eq!((t.received, t.done), (1, 1));
    assert_eq!(
        fact_row(&env, "export:stalled").await,
        Some(("done".into(), 2))
    );

    // It was alive after all: its `done` mark finds the fact taken over,
    // so its export (written in its transaction) is rolled back.
    gate.release.notify_one();
    let t = busy.await.unwrap().unwrap();
    assert_eq!((t.done, t.superseded), (0, 1));
    assert_each_job_done_once(&env, &["export:stalled"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_starting_together_create_the_facts_table_once() {
    let (env, ctl) = env().await;
    let starts = (0..6).map(|_| {
        let (client, pool, config) = (env.client(), env.pool.clone(), config(&env));
        let handler = Exports(ctl.clone());
        tokio::spawn(async move {
            onceq::worker::Worker::new(client, pool, config, handler)
                .await
                .map(drop)
        })
    });
    for start in starts.collect::<Vec<_>>() {
        start.await.unwrap().unwrap();
    }
    publish(&env, Some("export:one"), "req-one").await;
    let t = worker(&env, &ctl, |_| {}).await.drain().await.unwrap();
    assert_eq!(t.done, 1);
    assert_each_job_done_once(&env, &["export:one"]).await;
}
