//! The tokio runtime the command runs on, and how many threads `onceq
//! serve` gives it.
//!
//! The store's own work needs cores too: PostgreSQL's backends when it runs
//! on this machine, the embedded store's writer thread always. A request
//! thread per core beside them costs more than it serves: the threads wake
//! each other for every request and the cores spend the difference on
//! context switches. Measured on 2 cores (docs/performance.md, session 25):
//! one thread instead of two took 13–18 % less server CPU per publish beside
//! PostgreSQL (9 % on the embedded store), 16–19 % less per job in the mixed
//! phase (both stores), and gave 7–14 % more single publishes/s; nothing
//! was slower.

use std::{num::NonZeroUsize, str::FromStr};

/// `--worker-threads`: a count, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerThreads {
    /// Half the cores (at least one) when the store works on this machine
    /// (the embedded store, or PostgreSQL at a loopback address or socket),
    /// so it keeps the rest; one per core beside a remote PostgreSQL.
    Auto,
    /// Exactly this many.
    Count(NonZeroUsize),
}

impl FromStr for WorkerThreads {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s.eq_ignore_ascii_case("auto") {
            return Ok(Self::Auto);
        }
        s.parse::<NonZeroUsize>().map(Self::Count).map_err(|_| {
            format!("{s:?} is not a thread count: give a whole number from 1 up, or auto")
        })
    }
}

impl WorkerThreads {
    /// The count for a server on `cores` cores whose database is
    /// `database_url` (none: the embedded store).
    pub fn resolve(self, cores: NonZeroUsize, database_url: Option<&str>) -> NonZeroUsize {
        let store_is_here = database_url.is_none_or(onceq_pg::is_on_this_machine);
        match self {
            Self::Count(n) => n,
            Self::Auto if store_is_here => {
                NonZeroUsize::new(cores.get() / 2).unwrap_or(NonZeroUsize::MIN)
            }
            Self::Auto => cores,
        }
    }
}

/// The runtime: `threads` workers when given (for `serve`), tokio's default
/// otherwise (one per core, or `TOKIO_WORKER_THREADS`).
pub fn build(threads: Option<NonZeroUsize>) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if let Some(n) = threads {
        builder.worker_threads(n.get());
    }
    builder.build()
}

/// The machine's cores, as the runtime counts them (1 when unknown).
pub fn cores() -> NonZeroUsize {
    std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(v: usize) -> NonZeroUsize {
        NonZeroUsize::new(v).unwrap()
    }

    #[test]
    fn auto_halves_the_cores_unless_postgres_is_elsewhere() {
        let local = Some("postgres://u@127.0.0.1/db?pool_size=32");
        let remote = Some("postgres://u@db.internal/db");
        assert_eq!(WorkerThreads::Auto.resolve(n(2), local), n(1));
        assert_eq!(WorkerThreads::Auto.resolve(n(8), local), n(4));
        assert_eq!(WorkerThreads::Auto.resolve(n(1), local), n(1));
        assert_eq!(WorkerThreads::Auto.resolve(n(8), remote), n(8));
        assert_eq!(WorkerThreads::Auto.resolve(n(8), None), n(4));
        assert_eq!(WorkerThreads::Auto.resolve(n(2), None), n(1));
        assert_eq!(WorkerThreads::Count(n(3)).resolve(n(8), local), n(3));
    }

    #[test]
    fn a_count_is_a_whole_number_from_one() {
        assert_eq!("auto".parse(), Ok(WorkerThreads::Auto));
        assert_eq!("2".parse(), Ok(WorkerThreads::Count(n(2))));
        for bad in ["0", "-1", "two", ""] {
            let err = bad.parse::<WorkerThreads>().unwrap_err();
            assert!(err.contains("whole number"), "{bad}: {err}");
        }
    }
}
