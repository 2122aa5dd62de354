//! What the workers said: their `job settled` debug lines (one per message
//! handed to them that ran to an ending; a kill loses the lines of the jobs
//! it interrupts), counted by outcome.

use std::collections::HashMap;
use std::path::Path;

/// Outcomes the workers logged, by name (`Done`, `Duplicate`, `Deferred`,
/// `Superseded`, `Failed`, `Crashed`, `Abandoned`).
#[derive(Debug, Clone, Default)]
pub struct WorkerLog {
    /// Count per outcome.
    pub outcomes: HashMap<String, u64>,
    /// Settled lines for a message id seen before (a redelivery whose
    /// earlier hand-out also settled).
    pub repeats: u64,
    /// `ack refused (lease lost)` lines: a lease ran out under a busy worker.
    pub leases_lost: u64,
}

/// Reads every `worker*.log` in `run_dir`.
pub fn read(run_dir: &Path) -> WorkerLog {
    let mut out = WorkerLog::default();
    let mut seen: HashMap<String, u64> = HashMap::new();
    let Ok(entries) = std::fs::read_dir(run_dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("worker") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        for line in text.lines() {
            if line.contains("ack refused (lease lost)") {
                out.leases_lost += 1;
            }
            if !line.contains("job settled") {
                continue;
            }
            if let Some(outcome) = field(line, "outcome=") {
                let name = outcome.split([' ', '{']).next().unwrap_or(outcome);
                *out.outcomes.entry(name.to_owned()).or_default() += 1;
            }
            if let Some(id) = field(line, "message_id=") {
                *seen.entry(id.to_owned()).or_default() += 1;
            }
        }
    }
    out.repeats = seen.values().map(|n| n - 1).sum();
    out
}

/// The text after `name` up to the next space.
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let rest = &line[line.find(name)? + name.len()..];
    Some(rest.split(' ').next().unwrap_or(rest))
}
