//! Teeth: with one layer's protection off, the same harness must report
//! duplicated (or lost) work and fail. Small runs: the broken layer is
//! exercised from the first requests on. Each break is run on the Rust app
//! and on the Node one.

use onceq_chaos::{App, Break, Config};

use crate::support;

async fn broken_run(app: App, layer: Break) -> onceq_chaos::Report {
    let _one_at_a_time = support::SERIAL.lock().await;
    let config = Config {
        requests: 60,
        ..Config::small()
    }
    .with_break(layer);
    let config = match app {
        App::Rust => support::config(config),
        App::Node => support::node_config(config),
    };
    let started = std::time::Instant::now();
    let report = onceq_chaos::run(config)
        .await
        .expect("the run could be carried out");
    println!("{report}\n(took {:?})", started.elapsed());
    report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_route_without_the_ledger_is_caught() {
    caught(broken_run(App::Rust, Break::Ledger).await, "ledger");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_without_job_facts_is_caught() {
    caught(broken_run(App::Rust, Break::Facts).await, "job facts");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_route_without_the_ledger_is_caught() {
    caught(broken_run(App::Node, Break::Ledger).await, "ledger");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_worker_without_job_facts_is_caught() {
    caught(broken_run(App::Node, Break::Facts).await, "job facts");
}

fn caught(report: onceq_chaos::Report, missing: &str) {
    assert!(
        report.duplicated() + report.lost() > 0,
        "the checker missed the missing {missing}:\n{report}"
    );
    assert!(!report.passed());
    let _ = std::fs::remove_dir_all(&report.run_dir);
}
