//! Cron schedules (queue-api-2.md §7, docs/cron.md): schedules stored in
//! the database, fired by every server, each run published once.
//!
//! - [`schedule`]: an expression (croner) in a zone (jiff), or a one-shot:
//!   the next tick, daylight saving as documented.
//! - [`input`]: create's and update's bodies checked into a stored spec,
//!   without I/O.
//! - [`fire`]: firing one due run: publish with the run's dedupe key, then
//!   advance the schedule with a compare and set.
//! - [`fairness`]: each project's firing rate (a token bucket per
//!   project), so that one project's many schedules do not delay another's.
//! - [`shown`]: a stored schedule as the API shows it.
//! - [`task`]: task URLs through the push machinery (a queue of the
//!   schedule's with a push subscription to the URL).
//!
//! The loop that fires them is `maintenance::cron_firing`.

pub mod fairness;
pub mod fire;
pub mod input;
pub mod schedule;
pub mod shown;
pub mod task;
