//! End-to-end tests of the `onceq` binary: the real process, real stores,
//! real HTTP. `process` starts servers; `cli` drives the subcommands;
//! `accounts` the key scopes, rotation and project limits; `bench` runs
//! `onceq bench` in small;
//! `compat` runs the seed's Node.js route and worker unchanged against it;
//! `long_ops` checks bulk publish, purge, redrive and `stats --watch` when no
//! terminal is attached; `dashboard` drives the web dashboard in headless
//! Chromium; `stall` freezes PostgreSQL under a running server.

mod accounts;
mod admin_api;
mod bench;
mod cli;
mod compat;
mod dashboard;
mod failover;
mod long_ops;
mod outage_log;
mod pgbouncer;
mod process;
mod settings;
mod stall;
mod tls;
