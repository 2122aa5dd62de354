//! HTTP tests of the server: every endpoint of the contract, on both
//! backends, in-process through the router where the request and its answer
//! are the subject, over a real socket where the socket or the process is
//! (see `harness`'s module doc). `harness` starts servers; `prom` reads
//! `/metrics` answers; each other module is one capability group (`push`:
//! push subscriptions, with a webhook receiver; `webhooks`: account webhooks,
//! with the same receiver). Every test is written once
//! and run on SQLite and PostgreSQL by the `both!` macro.

mod answer;
mod harness;

mod ack_batch;
mod admin;
mod auth;
mod backoff;
mod clock_skew;
mod consume;
mod cron;
mod cron_clients;
mod cron_servers;
mod cron_task;
mod dashboard;
mod dashboard_actions;
mod dashboard_bulk_cancel;
mod dashboard_cancel;
mod dashboard_controls;
mod dashboard_cron;
mod dashboard_life;
mod dashboard_paging;
mod dashboard_webhooks;
mod discovery;
mod doc_tables;
mod early_answers;
mod envelope;
mod fair_share;
mod fifo;
mod flood;
mod hand_out;
mod headers;
mod hostile;
mod idempotency;
mod life;
mod limits;
mod message_get;
mod metering;
mod metrics;
mod metrics_access;
mod openapi;
mod outage;
mod pause;
mod payloads;
mod prom;
mod publish;
mod push;
mod queue_update;
mod queues;
mod rate_limits;
mod request_id;
mod requests;
mod scopes;
mod two_servers;
mod webhooks;
