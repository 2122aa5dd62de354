//! The readable table of `onceq bench`.

use super::BenchResult;

pub fn table(r: &BenchResult) {
    println!(
        "onceq bench: {} jobs, {} producers, {} workers",
        r.n, r.producers, r.workers
    );
    println!("{}", r.config);
    if let Some(fill) = &r.backlog_fill {
        println!(
            "backlog: {} messages waiting in another queue (published at {} jobs/s)",
            r.backlog, fill.jobs_per_s
        );
    }
    println!();
    println!("{:<26} {:>10} {:>8}", "phase", "jobs/s", "secs");
    let batch = format!("enqueue batch ({}/call)", r.batch_size);
    for (name, t) in [
        ("enqueue single", &r.enqueue_single),
        ("work", &r.work),
        (batch.as_str(), &r.enqueue_batch),
        ("work after batch", &r.work2),
    ] {
        let Some(t) = t else { continue };
        let flag = if t.timed_out { " (timed out)" } else { "" };
        println!("{name:<26} {:>10} {:>8.2}{flag}", t.jobs_per_s, t.secs);
    }
    println!();
    println!(
        "{:<12} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "mixed", "sent/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "missing"
    );
    let ms = |v: Option<f64>| v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into());
    for (rate, m) in &r.mixed {
        println!(
            "{:<12} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
            format!("@{rate}/s"),
            m.achieved_send_rate,
            ms(m.p50_ms),
            ms(m.p90_ms),
            ms(m.p99_ms),
            ms(m.max_ms),
            m.missing
        );
    }
}
