//! The small run on a Patroni cluster (`--patroni`): three nodes in strict
//! synchronous mode on three etcd members; the leader node SIGKILLed at
//! least once (Patroni promotes by itself), etcd members killed, servers,
//! APIs and workers killed and cut as in the small run. Nothing may be lost
//! or duplicated.

use onceq_chaos::faults::Kind;
use onceq_chaos::{Config, Size};

use crate::support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_patroni_run_loses_and_duplicates_nothing() {
    let _one_at_a_time = support::SERIAL.lock().await;
    let started = std::time::Instant::now();
    let config = support::config(Config::small().with_patroni(Size::Small));
    let report = onceq_chaos::run(config)
        .await
        .expect("the run could be carried out");
    println!("{report}\n(took {:?})", started.elapsed());

    assert_eq!(report.lost(), 0, "lost work:\n{report}");
    assert_eq!(report.duplicated(), 0, "duplicated work:\n{report}");
    assert!(report.passed(), "{report}");
    assert!(
        report.faults_of(Kind::Failover) >= 1,
        "the leader was never killed:\n{report}"
    );
    assert!(report.cron.passed(), "cron:\n{report}");
    assert_eq!(report.cron.max_per_tick, 1, "{report}");
    let _ = std::fs::remove_dir_all(&report.run_dir);
}
