//! The standard process metrics every Prometheus client library exports
//! (`process_resident_memory_bytes`, `process_cpu_seconds_total`,
//! `process_open_fds`, `process_max_fds`, `process_start_time_seconds`),
//! read at scrape time by `metrics-process` (from `/proc/self` on Linux; on
//! other systems what that crate can read there). A value the system does
//! not give is left out rather than written as 0.

use super::text::Families;

/// Appends the process metrics to `out`.
pub(super) fn write(out: &mut String) {
    // A few small reads of /proc/self (stat, limits, the fd directory):
    // microseconds, once per scrape.
    let p = metrics_process::collector::collect();
    let mut f = Families::new(out);
    if let Some(cpu) = p.cpu_seconds_total {
        f.counter(
            "process_cpu_seconds_total",
            "Total user and system CPU time spent in seconds.",
        )
        .sample("process_cpu_seconds_total", &[], cpu);
    }
    let gauges = [
        (
            "process_resident_memory_bytes",
            "Resident memory size in bytes.",
            p.resident_memory_bytes,
        ),
        (
            "process_open_fds",
            "Number of open file descriptors.",
            p.open_fds,
        ),
        (
            "process_max_fds",
            "Maximum number of open file descriptors (the soft limit; 0 when unlimited).",
            p.max_fds,
        ),
        (
            "process_start_time_seconds",
            "Start time of the process since unix epoch in seconds.",
            p.start_time_seconds,
        ),
    ];
    for (name, help, value) in gauges {
        if let Some(v) = value {
            f.gauge(name, help).sample(name, &[], v as f64);
        }
    }
}
