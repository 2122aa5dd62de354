//! Hole 5: long polling instead of a tight loop, and backoff (not a spin,
//! not an exit) while the server cannot be reached.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use onceq::worker::Worker;
use tokio::{net::TcpListener, sync::mpsc};
use tokio_util::sync::CancellationToken;

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hole5_long_poll_and_backoff() {
    let (env, ctl) = env().await;
    let create = onceq::types::request::CreateQueue {
        name: Some(QUEUE.into()),
        ..Default::default()
    };
    env.client().create_queue(&create).await.unwrap();

    // Long poll: a worker waiting up to 20 s gets a job published after it
    // started polling at once, in a handful of consume calls — a worker
    // polling an empty queue in a loop makes hundreds.
    let w = worker(&env, &ctl, |c| c.wait_seconds = 20).await;
    let stop = CancellationToken::new();
    let running = tokio::spawn({
        let (w, stop) = (w.clone(), stop.clone());
        async move { w.run(stop).await }
    });
    until("the first poll", || w.metrics().polls >= 1).await;
    publish(&env, Some("export:polled"), "req-polled").await;
    until("the job (well within the 20 s wait)", || {
        w.metrics().done == 1
    })
    .await;
    assert!(w.metrics().polls <= 3, "{:?}", w.metrics());
    stop.cancel();
    running.await.unwrap().unwrap();

    // Unreachable: every connection is dropped and counted. The test
    // counts attempts (4), not time, and checks each was paced.
    let proxy = FlakyProxy::start(&env.queue_url).await;
    let client = onceq::Client::new(&proxy.url, &env.api_key).unwrap();
    let w = Worker::new(client, env.pool.clone(), config(&env), Exports(ctl.clone()))
        .await
        .unwrap();
    let stop = CancellationToken::new();
    let running = tokio::spawn({
        let (w, stop) = (w.clone(), stop.clone());
        async move { w.run(stop).await }
    });
    let mut attempts = proxy.attempts;
    for _ in 0..4 {
        tokio::time::timeout(Duration::from_secs(10), attempts.recv())
            .await
            .expect("the worker stopped retrying")
            .unwrap();
    }
    let mut seen = 4;
    while attempts.try_recv().is_ok() {
        seen += 1;
    }
    // Every attempt after the first came after a completed backoff wait,
    // and the waits grew: failures 1, 2, 3 wait at least 10, 20, 40 ms
    // (equal jitter), measured by the worker. A spinning loop has none.
    let m = w.metrics();
    assert!(m.poll_errors >= 3, "{m:?}");
    assert!(m.backoffs + 1 >= seen, "{seen} attempts after {m:?}");
    assert!(m.backoff_ms >= 70, "{m:?}");
    assert!(
        !running.is_finished(),
        "run() gave up while the server was away"
    );

    // The server is back: the same run() picks up new work.
    proxy.up.store(true, Ordering::SeqCst);
    publish(&env, Some("export:after-outage"), "req-after-outage").await;
    until("the job after the outage", || w.metrics().done == 1).await;
    stop.cancel();
    running.await.unwrap().unwrap();
    assert_each_job_done_once(&env, &["export:polled", "export:after-outage"]).await;
}

/// A TCP front for the queue server that drops every connection (and
/// reports it) until `up`, then forwards.
struct FlakyProxy {
    url: String,
    up: Arc<AtomicBool>,
    attempts: mpsc::UnboundedReceiver<()>,
}

impl FlakyProxy {
    async fn start(target_url: &str) -> Self {
        let target = target_url.trim_start_matches("http://").to_owned();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let up = Arc::new(AtomicBool::new(false));
        let (tx, attempts) = mpsc::unbounded_channel();
        let is_up = up.clone();
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if !is_up.load(Ordering::SeqCst) {
                    drop(inbound);
                    let _ = tx.send(());
                    continue;
                }
                let target = target.clone();
                tokio::spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        });
        Self { url, up, attempts }
    }
}
