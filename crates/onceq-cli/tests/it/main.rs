//! End-to-end tests of the `onceq` binary: the real process, real stores,
//! real HTTP. `process` starts servers; `cli` drives the subcommands;
//! `cron` the cron commands and a one-shot fired by the server; `daily` the
//! commands of daily work (queue, ack/nack/extend, message, queues with
//! depths, dlq) on both stores; `life` a message's life (ack --result,
//! message get with attempts, dlq redrive --id, cancel); `errors` what
//! failures say;
//! `accounts` the key scopes, rotation and project limits; `bench` runs
//! `onceq bench` in small;
//! `compat` runs the seed's Node.js route and worker unchanged against it;
//! `node_package` runs the npm package's own tests (clients/node);
//! `exports_node` runs the seed's app rebuilt on it (examples/exports-node)
//! through a worker crash; `node_tarball` packs the package, installs the
//! tarball in a scratch project and runs a smaller story from it;
//! `long_ops` checks bulk publish, purge, redrive and `stats --watch` when no
//! terminal is attached; `dashboard` drives the web dashboard in headless
//! Chromium; `stall` freezes PostgreSQL under a running server; `container`
//! builds and runs the image in a private podman (`podman`); `deb` builds,
//! installs and runs the Debian package; `logs` checks the log's filter and
//! JSON format; `traces` the spans exported to `otlp`, a small OTLP receiver;
//! `read_only` a write landing on a read-only node; `patroni` automatic
//! failover, switchover and a cut-off leader on a Patroni cluster, through
//! a multi-host URL and through HAProxy.

mod accounts;
mod admin_api;
mod bench;
mod cli;
mod compat;
mod container;
mod cron;
mod daily;
mod dashboard;
mod dashboard_life;
mod deb;
mod errors;
mod exports_node;
mod failover;
mod life;
mod logs;
mod long_ops;
mod node_package;
mod node_tarball;
mod otlp;
mod outage_log;
mod patroni;
mod pgbouncer;
mod podman;
mod process;
mod read_only;
mod settings;
mod stall;
mod tls;
mod traces;
mod webhooks;
