//! The small run: 300 requests, 2 servers, 2 APIs, 2 workers (one whose
//! work outlasts its lease), every kind of fault a few times. Nothing may
//! be lost or duplicated — with the Rust app and with the Node one.

use onceq_chaos::faults::Kind;

use crate::support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_run_loses_and_duplicates_nothing() {
    small_run(support::config(onceq_chaos::Config::small())).await;
}

/// The same run with the Node app (examples/exports-node, on the npm
/// package) as the APIs and workers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_run_of_the_node_app_loses_and_duplicates_nothing() {
    small_run(support::node_config(onceq_chaos::Config::small())).await;
}

async fn small_run(config: onceq_chaos::Config) {
    let _one_at_a_time = support::SERIAL.lock().await;
    let started = std::time::Instant::now();
    let schedule = config.schedule.clone();
    let report = onceq_chaos::run(config)
        .await
        .expect("the run could be carried out");
    println!("{report}\n(took {:?})", started.elapsed());

    assert_eq!(report.lost(), 0, "lost work:\n{report}");
    assert_eq!(report.duplicated(), 0, "duplicated work:\n{report}");
    assert!(report.passed(), "{report}");
    // The run only proves something if it was hit by everything it
    // schedules (etcd kills are Patroni's: `patroni.rs`).
    for kind in Kind::ALL
        .into_iter()
        .filter(|k| schedule.every(*k).is_some())
    {
        assert!(
            report.faults_of(kind) >= 1,
            "no {kind} fault fired:\n{report}"
        );
    }
    assert!(report.redeliveries > 0, "no redelivery seen:\n{report}");
    assert!(
        report.sends > report.requests,
        "no duplicate sends:\n{report}"
    );
    assert!(report.replays_answered > 0, "no replay answered:\n{report}");
    // The cron scenario: each tick that fired published exactly one message.
    assert!(report.cron.passed(), "cron:\n{report}");
    assert!(
        report.cron.ticks_fired >= 10,
        "too few cron ticks:\n{report}"
    );
    assert_eq!(report.cron.max_per_tick, 1, "{report}");
    // Logs are kept only when something failed.
    let _ = std::fs::remove_dir_all(&report.run_dir);
}
