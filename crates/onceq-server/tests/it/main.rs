//! HTTP tests of the server: every endpoint of the contract, over a real
//! socket, on both backends. `harness` starts servers; `prom` reads
//! `/metrics` answers; each other module is one capability group. Every
//! test is written once and run on SQLite and PostgreSQL by the `both!`
//! macro.

mod harness;

mod auth;
mod consume;
mod envelope;
mod fifo;
mod metrics;
mod openapi;
mod outage;
mod prom;
mod publish;
mod queues;
mod two_servers;
