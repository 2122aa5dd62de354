//! The worker runtime against a real queue server and a real PostgreSQL
//! application database. One test per hole of `three-keys.md` layer 3
//! (named after it), plus crash points, fact derivation, and what the
//! worker tells the server of a job's end (`life`: error, result). Every test ends
//! with the same check: each published job has exactly one `exports` row
//! and the queue is empty — nothing lost, nothing done twice.

pub(crate) mod support;

mod cases;
mod crashes;
mod facts;
mod holes;
mod leases;
mod life;
mod polling;
mod shutdown;
