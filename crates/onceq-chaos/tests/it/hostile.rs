//! The small run (200 requests; servers, APIs and workers killed,
//! connections cut, PostgreSQL left up) with a hostile tenant beside it (`--hostile`, see
//! `onceq_chaos::hostile`): a second project, with its own key made by
//! `onceq keys create`, arriving a third of the way into the load with
//! 300 parked long polls, 20 webhooks and 30 push subscriptions at a
//! receiver that never answers, 43 every-second schedules, 100 queues and
//! no-op keyed calls, while the small run's faults fire (but PostgreSQL's). The victim
//! must lose and duplicate nothing, answer every key, fire each cron tick
//! once, and keep its median send and key latency within the stated
//! bound (docs/chaos.md; its latency before the tenant came is reported
//! beside it, not bounded by it); the tarpit may hold no more connections than
//! the servers' per-project outbound cap allows.

use onceq_chaos::Config;
use onceq_chaos::hostile::Sizes;

use crate::support;

/// `onceq serve`'s default `--outbound-max-per-project` (and
/// `--outbound-max-per-destination`): what one project may have open at
/// once, per server, towards every receiver together (and what all may
/// have open to the tarpit's one `host:port`).
const OUTBOUND_MAX_PER_PROJECT: u64 = 100;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_tenant_beside_the_small_run_takes_nothing_from_it() {
    let _one_at_a_time = support::SERIAL.lock().await;
    let started = std::time::Instant::now();
    let sizes = Sizes::small();
    // The small run's faults but PostgreSQL's own (restarts and
    // failovers are `small.rs`'s): with them, the tenant's writes make each
    // crash recovery and each new standby slower, the victim's load
    // stretches, more faults come (they come by the clock), and the run
    // takes minutes on a busy machine (docs/chaos.md has those figures).
    let mut config = Config {
        requests: 200,
        ..Config::small()
    };
    let s = &mut config.schedule;
    (s.pg_fast, s.pg_immediate, s.failover) = (None, None, None);
    let config = support::config(config.with_hostile(sizes.clone()));
    let servers = config.servers as u64;
    let report = onceq_chaos::run(config)
        .await
        .expect("the run could be carried out");
    println!("{report}\n(took {:?})", started.elapsed());

    // The victim: as in the small run, and every key answered.
    assert_eq!(report.lost(), 0, "lost work:\n{report}");
    assert_eq!(report.duplicated(), 0, "duplicated work:\n{report}");
    assert!(
        report.findings.unanswered.is_empty(),
        "keys never answered:\n{report}"
    );
    assert!(report.cron.passed(), "cron:\n{report}");
    assert!(
        report.cron.ticks_fired >= 10,
        "too few cron ticks:\n{report}"
    );
    assert_eq!(report.cron.max_per_tick, 1, "{report}");
    assert_eq!(
        report.latency.bound_met(),
        Some(true),
        "the victim's latency left its bound:\n{report}"
    );
    assert!(report.passed(), "{report}");

    // The tenant was there and hostile: everything made, its polls parked,
    // its receivers hanging, its schedules firing, its no-ops answered.
    let h = report
        .hostile
        .as_ref()
        .expect("the hostile tenant's findings");
    let m = &h.made;
    assert_eq!(m.webhooks, sizes.webhooks as u64, "{report}");
    assert!(
        m.subscriptions >= 10 * sizes.push_queues as u64,
        "ten per push queue (and one per task schedule):\n{report}"
    );
    assert!(m.queues >= sizes.queues as u64, "{report}");
    assert!(
        m.schedules > (sizes.schedules + sizes.task_schedules) as u64,
        "every-second ones and the paused one:\n{report}"
    );
    let [polls_peak, ..] = h.polls;
    assert!(
        polls_peak >= sizes.long_polls as u64 / 2,
        "too few long polls open at once:\n{report}"
    );
    let [accepted, tarpit_peak, _] = h.tarpit;
    assert!(accepted > 0, "nothing reached the tarpit:\n{report}");
    assert!(
        tarpit_peak <= servers * OUTBOUND_MAX_PER_PROJECT,
        "the tarpit held more than the per-project outbound cap allows:\n{report}"
    );
    assert!(
        h.cron_runs > 0,
        "the tenant's schedules never fired:\n{report}"
    );
    assert!(h.noops[1] > 0, "no no-op call answered:\n{report}");
    let _ = std::fs::remove_dir_all(&report.run_dir);
}
