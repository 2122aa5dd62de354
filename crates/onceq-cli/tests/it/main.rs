//! End-to-end tests of the `onceq` binary: the real process, real stores,
//! real HTTP. `process` starts servers; `cli` drives the subcommands;
//! `accounts` the key scopes, rotation and project limits; `bench` runs
//! `onceq bench` in small;
//! `compat` runs the seed's Node.js route and worker unchanged against it;
//! `long_ops` checks bulk publish, purge, redrive and `stats --watch` when no
//! terminal is attached; `dashboard` drives the web dashboard in headless
//! Chromium; `stall` freezes PostgreSQL under a running server; `logs`
//! checks the log's filter and JSON format; `traces` the spans exported to
//! `otlp`, a small OTLP receiver.

mod accounts;
mod bench;
mod cli;
mod compat;
mod dashboard;
mod failover;
mod logs;
mod long_ops;
mod otlp;
mod outage_log;
mod pgbouncer;
mod process;
mod stall;
mod tls;
mod traces;
