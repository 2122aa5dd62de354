//! HTTP tests of the server: every endpoint of the contract, over a real
//! socket, on both backends. `harness` starts servers; each other module is
//! one capability group. Every test is written once and run on SQLite and
//! PostgreSQL by the `both!` macro.

mod harness;

mod auth;
mod consume;
mod envelope;
mod fifo;
mod hostile;
mod metering;
mod outage;
mod publish;
mod queues;
mod rate_limits;
mod scopes;
mod two_servers;
