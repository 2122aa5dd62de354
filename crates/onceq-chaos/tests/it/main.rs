//! The chaos run in the test suite: the small run must lose and duplicate
//! nothing; each broken layer must be caught.
//!
//! - `support`: finds (and builds) the `onceq` and `exports` binaries, and
//!   makes the Node app ready (npm installs, the package built).
//! - `small`: the small run under every kind of fault (the Rust app, and the
//!   Node one).
//! - `hostile`: the small run with a hostile tenant beside it
//!   (`--hostile`): the victim's result and latency bound.
//! - `patroni`: the small run on a Patroni cluster (`--patroni`).
//! - `teeth`: `--break ledger` and `--break facts` must fail (both apps).
//!
//! The runs are serialized: each starts a PostgreSQL cluster and seven
//! processes, and this machine has two cores; run side by side they would
//! mostly measure each other.

mod hostile;
mod patroni;
mod small;
mod support;
mod teeth;
