//! Teeth: with one layer's protection off, the same harness must report
//! duplicated (or lost) work and fail. Small runs: the broken layer is
//! exercised from the first requests on.

use onceq_chaos::{Break, Config};

use crate::support;

async fn broken_run(layer: Break) -> onceq_chaos::Report {
    let _one_at_a_time = support::SERIAL.lock().await;
    let config = Config {
        requests: 60,
        ..Config::small()
    }
    .with_break(layer);
    let started = std::time::Instant::now();
    let report = onceq_chaos::run(support::config(config))
        .await
        .expect("the run could be carried out");
    println!("{report}\n(took {:?})", started.elapsed());
    report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_route_without_the_ledger_is_caught() {
    let report = broken_run(Break::Ledger).await;
    assert!(
        report.duplicated() + report.lost() > 0,
        "the checker missed the missing ledger:\n{report}"
    );
    assert!(!report.passed());
    let _ = std::fs::remove_dir_all(&report.run_dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_without_job_facts_is_caught() {
    let report = broken_run(Break::Facts).await;
    assert!(
        report.duplicated() + report.lost() > 0,
        "the checker missed the missing job facts:\n{report}"
    );
    assert!(!report.passed());
    let _ = std::fs::remove_dir_all(&report.run_dir);
}
