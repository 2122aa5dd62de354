//! The readable table of `onceq bench`.

use super::{BenchResult, cpu::PhaseCpu};

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
    cpu_table(r);
}

/// CPU per job and context switches per request, per phase.
fn cpu_table(r: &BenchResult) {
    let batch = format!("enqueue batch ({}/call)", r.batch_size);
    let mut rows: Vec<(String, &PhaseCpu)> = [
        ("enqueue single", &r.enqueue_single),
        ("work", &r.work),
        (batch.as_str(), &r.enqueue_batch),
        ("work after batch", &r.work2),
    ]
    .into_iter()
    .filter_map(|(name, t)| Some((name.to_owned(), t.as_ref()?.cpu.as_ref()?)))
    .collect();
    rows.extend(
        r.mixed
            .iter()
            .filter_map(|(rate, m)| Some((format!("mixed @{rate}/s"), m.cpu.as_ref()?))),
    );
    if rows.is_empty() {
        return;
    }
    let w = &r.cpu_watch;
    let pid = |p: Option<u32>| p.map_or_else(|| "not watched".to_owned(), |p| p.to_string());
    println!();
    println!(
        "CPU per job (µs) and context switches per request; server pid {}, PostgreSQL postmaster {}",
        pid(w.server_pid),
        pid(w.postgres_pid)
    );
    println!(
        "{:<26} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "phase", "server", "postgres", "total", "server cs", "pg cs"
    );
    let opt = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |x| format!("{x:.1}"));
    for (name, c) in rows {
        println!(
            "{name:<26} {:>10.1} {:>10} {:>10.1} {:>10.1} {:>10}",
            c.server_cpu_us_per_job,
            opt(c.postgres_cpu_us_per_job),
            c.total_cpu_us_per_job,
            c.server_context_switches_per_request,
            opt(c.postgres_context_switches_per_request)
        );
    }
}
