//! The chaos run: onceq's promise — *nothing lost, nothing done twice* —
//! checked on the real processes while they are killed, cut off, failed over
//! to a standby PostgreSQL and starved of their leases (see `docs/chaos.md`).
//!
//! A run starts a throwaway PostgreSQL (a primary and its synchronous
//! standby when the schedule has failovers), one or two `onceq serve` on one
//! database, N `exports api` and M `exports worker` on another, every
//! connection between them through a TCP proxy that can cut it; a client
//! sends R export requests the way a real one would (double taps, retries
//! after timeouts, 5xx and 409); faults fire on a schedule; when the client
//! is done and the queue has drained, the checker compares what the client
//! was promised (each 202) with what was built (rows in `exports`) and
//! prints a [`Report`].
//!
//! Modules, in the order a run uses them:
//!
//! - [`config`]: [`Config`], the run's sizes and schedules, with the `small`
//!   and `large` presets and the `--break` switches (teeth).
//! - [`cluster`]: the PostgreSQL cluster (or HA pair: primary and
//!   synchronous standby, for failovers) and its two databases.
//! - [`proxy`]: a TCP proxy on 127.0.0.1 that can cut every live connection.
//! - [`procs`]: the supervisor: child processes with their env and log
//!   files, `kill -9`, restart after a pause.
//! - [`pipeline`]: the whole topology — servers, APIs, workers, proxies —
//!   built from a [`Config`].
//! - [`client`]: the load: R keys, re-sent as a real client would, every
//!   202 recorded.
//! - [`faults`]: the fault schedule, one timer per kind.
//! - [`sampler`]: watches the queue's delivery counts (redeliveries).
//! - [`drain`]: waits for the queue to empty (redriving dead letters that
//!   still need their work, as an operator would).
//! - [`check`]: reads both databases and finds lost and duplicated work.
//! - [`cron`]: the cron scenario: schedules firing every second through
//!   the chaos, then a count of the messages per tick (exactly one each).
//! - [`hostile`]: `--hostile`, a second project on the same servers
//!   behaving as a hostile tenant beside the load.
//! - [`latency`]: the victim's send and key latencies, before and with the
//!   hostile tenant.
//! - [`logs`]: counts what the workers logged (outcomes, lost leases).
//! - [`report`]: [`Report`] and how it prints.
//! - [`mod@run`]: [`run()`], the sequence of all of the above.
//!
//! Errors are `anyhow` throughout: this is a harness whose callers only
//! report failures, never branch on them.

pub mod check;
pub mod client;
pub mod cluster;
pub mod config;
pub mod cron;
pub mod drain;
pub mod faults;
pub mod hostile;
pub mod latency;
pub mod logs;
pub mod pipeline;
pub mod procs;
pub mod proxy;
pub mod report;
pub mod run;
pub mod sampler;

pub use config::{App, Break, Config, Size};
pub use report::Report;
pub use run::run;

/// The queue the exports app uses (its `EXPORTS_QUEUE` default).
pub const QUEUE: &str = "api-enqueue-jobs";
/// Its dead-letter queue, created with it by the first publish.
pub const DLQ: &str = "api-enqueue-jobs-dlq";
/// The victim's project: the one [`API_KEY`] acts for.
pub const PROJECT: &str = "default";
/// The API key the servers accept and the apps use.
pub const API_KEY: &str = "chaos-key";
